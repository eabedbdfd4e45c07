<?php

declare(strict_types=1);
echo 'never reached: the body is refused before the script runs';
