<?php

declare(strict_types=1);
// Declares a function without an existence check: a second run in the same worker would be "Cannot redeclare".
function kiln_sequential_declared_once(): string
{
    return 'declared';
}
echo kiln_sequential_declared_once(), ' ', getmypid();
