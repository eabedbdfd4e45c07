<?php

declare(strict_types=1);

// Starts a program in the background whose standard error is not redirected, then ends the worker (exit()): the
// program writes to it after the worker is gone.
$mark = preg_replace('/[^a-z0-9]/', '', (string) ($_GET['mark'] ?? ''));
exec("(sleep 1; echo 'background said first $mark' >&2; sleep 0.3; echo 'background said second $mark' >&2) > /dev/null &");
exit("started $mark");
