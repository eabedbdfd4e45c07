<?php

declare(strict_types=1);
// A bootstrap guarded by a constant, as older apps write it: an uncaught Error after functions.php declared its
// functions but before the guard is set leaves the declarations half-made in a shared process.
if (!defined('KILN_HALF_BOOTED')) {
    require __DIR__ . '/functions.php';
    if (($_GET['fail'] ?? '') === '1') {
        kiln_half_fail();
    }
    define('KILN_HALF_BOOTED', true);
}
echo kiln_half_ready();
