<?php

declare(strict_types=1);

// A Content-Length that is not what the script prints: ?short says more than it prints, else it says less.
header('Content-Type: text/plain');
header('Content-Length: ' . (isset($_GET['short']) ? 20 : 5));
echo 'hello';
flush();
echo ' world';
