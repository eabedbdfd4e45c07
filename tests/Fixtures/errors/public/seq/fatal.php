<?php

declare(strict_types=1);
echo 'partial output';
trigger_error('a fatal error on purpose', E_USER_ERROR);
