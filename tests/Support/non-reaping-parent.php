<?php

declare(strict_types=1);

/*
 * A container's init that does not reap orphans, for tests: `php non-reaping-parent.php ARGS...` runs
 * `php bin/kiln ARGS...` as its child and makes itself a child subreaper (prctl through FFI), so every process
 * below it that loses its parent is given to it, as to PID 1 in a container. It reaps only the kiln process
 * (whose exit it returns as its own); every other orphan stays a zombie until this process exits. SIGTERM and
 * SIGINT are passed on to kiln. Needs the FFI extension (php-ffi): without it, it says so and exits 1.
 */

if (!extension_loaded('ffi')) {
    fwrite(STDERR, "non-reaping-parent: the FFI extension (php-ffi) is needed to act as a subreaper\n");
    exit(1);
}
try {
    $libc = FFI::cdef('int prctl(int option, unsigned long arg2, unsigned long arg3, unsigned long arg4, unsigned long arg5);');
    $subreaper = $libc->prctl(36, 1, 0, 0, 0); // @phpstan-ignore method.notFound (FFI)
} catch (Throwable $e) {
    fwrite(STDERR, "non-reaping-parent: prctl through FFI failed: {$e->getMessage()}\n");
    exit(1);
}
if ($subreaper !== 0) {
    fwrite(STDERR, "non-reaping-parent: prctl(PR_SET_CHILD_SUBREAPER) failed\n");
    exit(1);
}

$kiln = pcntl_fork();
if ($kiln === -1) {
    fwrite(STDERR, "non-reaping-parent: fork failed\n");
    exit(1);
}
if ($kiln === 0) {
    pcntl_exec(PHP_BINARY, [__DIR__ . '/../../bin/kiln', ...array_slice($argv, 1)]);
    exit(127);
}

pcntl_async_signals(true);
foreach ([SIGTERM, SIGINT] as $signal) {
    pcntl_signal($signal, static function (int $signal) use ($kiln): void {
        posix_kill($kiln, $signal);
    });
}
$status = 0;
while (pcntl_waitpid($kiln, $status, WNOHANG) === 0) {
    usleep(20_000);
}
$status = \is_int($status) ? $status : 0;
exit(pcntl_wifexited($status) ? pcntl_wexitstatus($status) : 128 + (int) pcntl_wtermsig($status));
