<?php

declare(strict_types=1);

// Runs until the test creates the file ?marker= names (in the temporary folder), then ends the worker with exit().
// It says it has started by creating that name with `.started` after it. Five seconds at most.
$marker = sys_get_temp_dir() . '/kiln-exit-' . preg_replace('/[^a-z0-9]/', '', (string) ($_GET['marker'] ?? ''));
touch("$marker.started");
for ($waited = 0; $waited < 500 && !file_exists($marker); $waited++) {
    usleep(10_000);
}
exit('exited when told');
