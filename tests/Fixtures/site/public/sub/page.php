<?php

declare(strict_types=1);

// A script below the root, for PATH_INFO (/sub/page.php/a/b) and extensionless (/sub/page) requests.
require dirname(__DIR__) . '/dump.php';
