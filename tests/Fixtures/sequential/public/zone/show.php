<?php

declare(strict_types=1);

echo date_default_timezone_get();
