<?php

declare(strict_types=1);
// The value of one php.ini setting, as the script sees it.
echo ini_get((string) ($_GET['name'] ?? ''));
