<?php

declare(strict_types=1);

// Declared in a condition that is no existence check: a second run would declare it again.
if (PHP_VERSION_ID >= 80200) {
    function kiln_sequential_conditional(): string
    {
        return 'conditional';
    }
}
echo kiln_sequential_conditional(), ' ', getmypid();
