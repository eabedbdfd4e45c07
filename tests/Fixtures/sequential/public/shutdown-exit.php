<?php

declare(strict_types=1);

// As phpMyAdmin does: a shutdown function that ends with exit(), which makes PHP skip the shutdown functions after it.
register_shutdown_function(static function (): void {
    echo ' then the shutdown function';
    header('X-Shutdown: exited');
    exit;
});
echo 'main body';
