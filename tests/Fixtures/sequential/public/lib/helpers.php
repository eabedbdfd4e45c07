<?php

declare(strict_types=1);

// Declares a function: runs once per worker, then require_once skips it (running it again would redeclare).
$helpersTopLevel = 'set';

function kiln_sequential_helper(): string
{
    return 'helper';
}
