<?php

declare(strict_types=1);

require_once __DIR__ . '/boot.php';
echo kiln_setup_helper();
