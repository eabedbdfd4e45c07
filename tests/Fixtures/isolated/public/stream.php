<?php

declare(strict_types=1);

// Writes a line every 50 ms for ~$_GET['s'] seconds, flushing each, then records that it finished.
$end = microtime(true) + (float) ($_GET['s'] ?? 1);
$i = 0;
while (microtime(true) < $end) {
    echo 'line ', $i++, ' ', str_repeat('x', 1000), "\n";
    flush();
    usleep(50_000);
}
echo "done\n";
