<?php

declare(strict_types=1);

// About 52 KiB of HTML written over about 28 ms, as a CMS page arrives: PHP's output buffer (4 KiB) hands it to
// the FastCGI layer, whose 8 KiB buffer sends it to the server in 7 writes while the script still works, so the
// front wakes for each of them (bench/README.md).
echo "<!doctype html><html><head><title>stream</title></head><body>\n";
for ($i = 0; $i < 700; $i++) {
    echo '<p class="entry">Lorem ipsum dolor sit amet, ', $i, ' consectetur adipiscing.</p>', "\n";
    if ($i % 50 === 49) {
        usleep(2000);
    }
}
echo "</body></html>\n";
