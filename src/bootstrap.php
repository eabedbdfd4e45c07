<?php

declare(strict_types=1);

// Kiln needs no Composer at run time: this registers the PSR-4 autoloader for src/.
spl_autoload_register(static function (string $class): void {
    if (\strncmp($class, 'Kiln\\', 5) !== 0) {
        return;
    }
    $file = __DIR__ . '/' . \str_replace('\\', '/', \substr($class, 5)) . '.php';
    if (\is_file($file)) {
        require $file;
    }
});

require_once __DIR__ . '/Loop/functions.php';
require_once __DIR__ . '/App/functions.php';
