<?php

declare(strict_types=1);

function kiln_half_ready(): string
{
    return 'ready';
}

function kiln_half_fail(): void
{
    kiln_half_no_such_function(); // @phpstan-ignore function.notFound (the Error on purpose)
}
