<?php

declare(strict_types=1);

// A legacy bootstrap: declares a helper, and sets up the request at its top level.
if (!defined('KILN_SETUP_BOOTED')) {
    define('KILN_SETUP_BOOTED', true);
    header('X-Booted: yes');
}

function kiln_setup_helper(): string
{
    return 'helper';
}
