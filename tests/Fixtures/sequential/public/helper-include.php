<?php

declare(strict_types=1);
// An app's include file: declares a function without an existence check, and is reachable by its own URL.
function kiln_sequential_helper(): string
{
    return 'helped';
}
