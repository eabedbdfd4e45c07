<?php

declare(strict_types=1);

function kiln_isolated_trace(): void
{
    throw new RuntimeException('kiln isolated trace');
}
kiln_isolated_trace();
