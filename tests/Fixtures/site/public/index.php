<?php

declare(strict_types=1);

// The front controller: anything that is not a file lands here (REQUEST_URI keeps what was asked).
require __DIR__ . '/dump.php';
