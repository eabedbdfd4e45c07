<?php

declare(strict_types=1);
// Declares its function only when it is not there yet: runs again in the same worker.
if (!function_exists('kiln_sequential_guarded')) {
    function kiln_sequential_guarded(): string
    {
        return 'guarded';
    }
}
echo kiln_sequential_guarded(), ' ', getmypid();
