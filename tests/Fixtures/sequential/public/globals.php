<?php

declare(strict_types=1);
// Top-level variables are globals, and they do not survive into the next request.
$counter = ($counter ?? 0) + 1;
$db = 'connection';
if (!function_exists('kiln_sequential_read_globals')) {
    function kiln_sequential_read_globals(): string
    {
        global $counter, $db;
        return "$db:$counter";
    }
}
echo kiln_sequential_read_globals(), ';', isset($GLOBALS['db']) ? 'in GLOBALS' : 'not in GLOBALS', ';', isset($this) ? 'this' : 'no this';
