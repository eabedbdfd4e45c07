<?php

declare(strict_types=1);

// Variables only: under php-fpm this runs on every request that require_once's it.
$config = ['name' => 'kiln', 'loaded_at' => microtime(true)];
