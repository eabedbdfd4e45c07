<?php

declare(strict_types=1);

// Stopped by the time limit as usleep() returns, with a string interpolation next: unwinding the script from
// there (exit() in the signal handler) crashed PHP 8.2, and the client got no answer.
$seconds = 3.0;
usleep((int) ($seconds * 1e6));
echo "slept $seconds s in ", getmypid(), "\n";
