<?php

declare(strict_types=1);

// Holds its worker's loop for ?ms= milliseconds (a blocking wait, as a slow query is), then answers its pid.
$ms = $_GET['ms'] ?? '100';
usleep(\is_numeric($ms) ? (int) $ms * 1000 : 0);
echo getmypid();
