<?php

declare(strict_types=1);
// Loads an include file that declares without an existence check, as apps' includes do.
require_once __DIR__ . '/helper-include.php';
echo kiln_sequential_helper(), ' ', getmypid();
