<?php

declare(strict_types=1);

// What the benchmarks load, without Composer's vendor/ (`make bench` installs only what Kiln runs with):
// Kiln's own autoloader for src/, and the test helpers under tests/ that bench/wordpress/prepare.php uses
// (Kiln\Tests\… → tests/…), which need nothing from vendor/ either.
require __DIR__ . '/../../src/bootstrap.php';

spl_autoload_register(static function (string $class): void {
    if (\strncmp($class, 'Kiln\\Tests\\', 11) !== 0) {
        return;
    }
    $file = __DIR__ . '/../../tests/' . \str_replace('\\', '/', \substr($class, 11)) . '.php';
    if (\is_file($file)) {
        require $file;
    }
});
