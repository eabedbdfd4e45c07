<?php

declare(strict_types=1);

/*
 * CPU per piece when every piece of a slow response wakes an idle worker, as php-cgi's output reaches the
 * isolated tier's front: a forked writer sends 8 KiB every GAP µs over a unix socket, doing other work in
 * between (it walks an array of ~8 MiB, as a php-cgi child's page evicts the cache); this process sleeps in
 * the epoll driver until each piece arrives and reads it in one of three ways:
 *
 *   callback   in the readable watcher's callback (no Fiber);
 *   fiber      by a Fiber the callback resumes; the watcher stays enabled from one wait to the next, as the
 *              FastCGI connection's does (Isolation\FastCgi\Internal\Connection::await());
 *   toggle     as fiber, but the watcher is enabled before each wait and disabled after it;
 *   generator  as fiber, with the pieces yielded by a generator to a foreach, as a streamed body reaches
 *              ResponseSender::sendIterable().
 *
 *   php -d opcache.enable_cli=1 -d opcache.jit_buffer_size=64M -d opcache.jit=tracing \
 *       bench/micro/wake.php callback|fiber|toggle|generator [PIECES [GAP-µs [ARRAY-ITEMS]]]
 *
 * Prints this process's CPU per piece (/proc/self/schedstat: user and system time, ns). The machine's phase
 * moves it a lot: run the modes alternately, several rounds, and compare medians. Keep the default 2500 pieces:
 * in a run of a few hundred, the tracing JIT's warm-up (traces recorded and aborted while the code settles)
 * is most of what is measured, and it costs the Fiber modes more than the callback.
 */

require __DIR__ . '/../../src/bootstrap.php';

use Kiln\Loop\Driver\EpollDriver;
use Kiln\Loop\Loop;
use Kiln\Loop\Suspension;

$mode = $argv[1] ?? 'callback';
$pieces = (int) ($argv[2] ?? 2500);
$gapUs = (int) ($argv[3] ?? 3000);
$items = (int) ($argv[4] ?? 500_000);
if (!in_array($mode, ['callback', 'fiber', 'toggle', 'generator'], true)) {
    fwrite(STDERR, "mode: callback, fiber, toggle or generator\n");
    exit(2);
}
if (!EpollDriver::isSupported()) {
    fwrite(STDERR, 'The epoll driver is not available here: ' . EpollDriver::unsupportedReason() . "\n");
    exit(1);
}
Loop::set(new EpollDriver());

$pair = stream_socket_pair(STREAM_PF_UNIX, STREAM_SOCK_STREAM, STREAM_IPPROTO_IP);
if ($pair === false) {
    throw new RuntimeException('socketpair failed');
}
[$reader, $writer] = $pair;
$pid = pcntl_fork();
if ($pid === 0) {
    fclose($reader);
    $piece = str_repeat('x', 8192);
    $work = range(1, max(1, $items));
    for ($i = 0; $i < $pieces; $i++) {
        $due = hrtime(true) + $gapUs * 1000;
        $sum = 0;
        foreach ($work as $value) {
            $sum += $value;
        }
        while (hrtime(true) < $due) {
            usleep(200);
        }
        fwrite($writer, $piece);
    }
    exit(0);
}
fclose($writer);
stream_set_blocking($reader, false);

/** CPU time of this thread so far, ns. */
$cpu = static fn(): int => (int) explode(' ', (string) file_get_contents('/proc/self/schedstat'))[0];

$total = $pieces * 8192;
$received = 0;
$wakes = 0;
$start = $cpu();
if ($mode === 'callback') {
    $watcher = '';
    $watcher = Loop::onReadableUnbuffered($reader, static function () use ($reader, &$received, &$wakes, $total, &$watcher): void {
        $wakes++;
        $received += strlen((string) fread($reader, 65536));
        if ($received >= $total) {
            Loop::cancel($watcher);
        }
    });
} else {
    /** @var ?Suspension $waiting */
    $waiting = null;
    $watcher = Loop::onReadableUnbuffered($reader, static function () use (&$waiting): void {
        $suspension = $waiting;
        $waiting = null;
        $suspension?->resume();
    });
    $toggle = $mode === 'toggle';
    $wait = static function () use (&$waiting, $watcher, $toggle): void {
        if ($toggle) {
            Loop::enable($watcher);
        }
        $waiting = Loop::getSuspension();
        $waiting->suspend();
        if ($toggle) {
            Loop::disable($watcher);
        }
    };
    if ($toggle) {
        Loop::disable($watcher);
    }
    $read = static function () use ($reader, $wait, &$wakes, $total): Generator {
        $got = 0;
        while ($got < $total) {
            $wait();
            $wakes++;
            $piece = (string) fread($reader, 65536);
            $got += strlen($piece);
            yield $piece;
        }
    };
    Loop::queueAsync(static function () use ($mode, $reader, $wait, $read, &$received, &$wakes, $total, $watcher): void {
        if ($mode !== 'generator') {
            while ($received < $total) {
                $wait();
                $wakes++;
                $received += strlen((string) fread($reader, 65536));
            }
        } else {
            foreach ($read() as $piece) {
                $received += strlen($piece);
            }
        }
        Loop::cancel($watcher);
    });
}
Loop::run();
$used = $cpu() - $start;
pcntl_waitpid($pid, $status);
printf("%-9s %d pieces in %d wakes: %.1f µs of CPU per wake\n", $mode, $pieces, $wakes, $used / 1e3 / max(1, $wakes));
