<?php

declare(strict_types=1);

// An uncaught exception 300 calls deep: PHP writes its message and trace (some 30 KiB) in pieces of 8 KiB.
function kiln_deep_trace(int $depth): void
{
    if ($depth === 0) {
        throw new RuntimeException('kiln deep trace');
    }
    kiln_deep_trace($depth - 1);
}
kiln_deep_trace(300);
