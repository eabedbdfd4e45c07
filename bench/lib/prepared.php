<?php

declare(strict_types=1);

/**
 * How a bench prepare script hands over what it made (bench/db/prepare.php, bench/wordpress/prepare.php):
 * $prepare() starts the servers and returns what to print and how to stop them; that is printed as `key=value`
 * lines and `ready`, then held until TERM or INT, when it is stopped. A failure of $prepare() prints `error=...`
 * (on one line) and exits 1.
 *
 * @param Closure(): array{array<string, string>, Closure(): void} $prepare
 */
function benchHoldPrepared(Closure $prepare): void
{
    $stop = false;
    pcntl_async_signals(true);
    foreach ([SIGTERM, SIGINT] as $signal) {
        pcntl_signal($signal, static function () use (&$stop): void {
            $stop = true;
        });
    }
    try {
        [$info, $release] = $prepare();
    } catch (Throwable $e) {
        echo 'error=' . str_replace("\n", ' | ', $e->getMessage()) . "\n";
        exit(1);
    }
    foreach ($info as $key => $value) {
        echo "$key=$value\n";
    }
    echo "ready\n";
    while (!$stop) {
        sleep(1);
    }
    $release();
}
