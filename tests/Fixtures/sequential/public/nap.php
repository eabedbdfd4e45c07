<?php

declare(strict_types=1);

// Sleeps ?ms= milliseconds; with ?mark=NAME it first creates NAME in the system's temp directory, so a test
// can see the worker is busy.
$mark = (string) ($_GET['mark'] ?? '');
if ($mark !== '' && preg_match('/^[a-z0-9-]+$/', $mark) === 1) {
    touch(sys_get_temp_dir() . "/$mark");
}
usleep(1000 * (int) ($_GET['ms'] ?? 0));
echo 'rested';
