<?php

declare(strict_types=1);
// Declares a function: fine on the first request, "Cannot redeclare" on the second in the same worker.
function kiln_sequential_declared_once(): string
{
    return 'declared';
}
echo kiln_sequential_declared_once();
