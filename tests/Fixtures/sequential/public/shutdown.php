<?php

declare(strict_types=1);
register_shutdown_function(static function (): void {
    echo ' shutdown function ran';
    header('X-Shutdown: ran');
});
echo 'main body';
