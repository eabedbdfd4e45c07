<?php

declare(strict_types=1);

/**
 * Autoloads Workerman 5 from where its source is (WORKERMAN_SRC, default ../shared/peers/workerman), never
 * copied; exits 1 when it is not there.
 */
function loadWorkerman(): void
{
    $src = getenv('WORKERMAN_SRC') ?: __DIR__ . '/../../../../shared/peers/workerman';
    if (!is_file("$src/src/Worker.php")) {
        fwrite(STDERR, "Workerman's source is not at $src (set WORKERMAN_SRC)\n");
        exit(1);
    }
    spl_autoload_register(static function (string $class) use ($src): void {
        if (str_starts_with($class, 'Workerman\\')) {
            $file = $src . '/src/' . str_replace('\\', '/', substr($class, 10)) . '.php';
            if (is_file($file)) {
                require $file;
            }
        }
    });
}
