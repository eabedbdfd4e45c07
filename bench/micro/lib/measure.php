<?php

declare(strict_types=1);

/** CPU time (user + system) this process has used so far, in microseconds. */
function cpuMicros(): float
{
    $usage = getrusage();
    \assert($usage !== false);
    $micros = 0.0;
    foreach (['ru_utime', 'ru_stime'] as $kind) {
        $seconds = $usage["$kind.tv_sec"];
        $fraction = $usage["$kind.tv_usec"];
        \assert(\is_int($seconds) && \is_int($fraction));
        $micros += $seconds * 1e6 + $fraction;
    }
    return $micros;
}

/**
 * Runs the server's loop and measures it: [wall clock in ns, this process's CPU in µs].
 *
 * @return array{int, float}
 */
function measureRun(callable $run): array
{
    $start = hrtime(true);
    $cpuStart = cpuMicros();
    $run();
    return [hrtime(true) - $start, cpuMicros() - $cpuStart];
}

/** A 127.0.0.1 address nobody listens on right now, for servers that bind by address. */
function freeAddress(): string
{
    $probe = stream_socket_server('tcp://127.0.0.1:0');
    \assert($probe !== false);
    $address = (string) stream_socket_get_name($probe, false);
    fclose($probe);
    return $address;
}
