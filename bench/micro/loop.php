<?php

declare(strict_types=1);

/*
 * Micro benchmarks of the loop layer: `php bench/micro/loop.php`.
 * Results are ratios within one run; absolute numbers depend on the machine.
 */

use Kiln\Loop\Driver;
use Kiln\Loop\Driver\EpollDriver;
use Kiln\Loop\Driver\SelectDriver;
use Kiln\Loop\Internal\FiberPool;

require __DIR__ . '/../../src/bootstrap.php';

/** @return float nanoseconds per iteration */
function measure(int $n, Closure $body): float
{
    $start = hrtime(true);
    $body($n);

    return (hrtime(true) - $start) / $n;
}

function report(string $name, float $ns, ?float $baseline = null): void
{
    printf("%-52s %9.3f µs%s\n", $name, $ns / 1000, $baseline === null ? '' : sprintf('   (%.2f×)', $ns / $baseline));
}

$jobs = 200_000;
echo "Fibers, $jobs jobs, each suspended once and resumed\n";
$fresh = measure($jobs, static function (int $n): void {
    for ($i = 0; $i < $n; $i++) {
        $fiber = new Fiber(static fn() => Fiber::suspend());
        $fiber->start();
        $fiber->resume();
    }
});
$pool = new FiberPool(static fn(Throwable $e) => throw $e);
$pooled = measure($jobs, static function (int $n) use ($pool): void {
    $current = null;
    $job = static function () use (&$current): void {
        $current = Fiber::getCurrent();
        Fiber::suspend();
    };
    for ($i = 0; $i < $n; $i++) {
        $pool->run($job);
        $current->resume();
    }
});
report('new Fiber per job', $fresh);
report('pooled Fiber (FiberPool)', $pooled, $fresh);

/** @return list<resource> */
function idleSockets(int $count): array
{
    $sockets = [];
    for ($i = 0; $i < $count; $i++) {
        $pair = stream_socket_pair(STREAM_PF_UNIX, STREAM_SOCK_STREAM, STREAM_IPPROTO_IP);
        array_push($sockets, ...$pair);
    }

    return $sockets;
}

function tickCost(Driver $driver, array $sockets, int $ticks): float
{
    $ids = [];
    for ($i = 0; $i < count($sockets); $i += 2) {
        $ids[] = $driver->onReadable($sockets[$i], static fn() => null);
    }
    $count = 0;
    $ids[] = $driver->repeat(0, static function () use ($driver, &$count, $ticks): void {
        if (++$count === $ticks) {
            $driver->stop();
        }
    });
    $ns = measure($ticks, static fn() => $driver->run());
    array_map($driver->cancel(...), $ids);

    return $ns;
}

$ticks = 50_000;
$sockets = idleSockets(100);
echo "\nLoop tick with 100 idle readable sockets ($ticks ticks, poll timeout 0)\n";
$select = tickCost(new SelectDriver(), $sockets, $ticks);
report('SelectDriver tick', $select);
if (EpollDriver::isSupported()) {
    report('EpollDriver tick', tickCost(new EpollDriver(), $sockets, $ticks), $select);

    echo "\nEpollDriver: finding a stream's fd (onReadable + cancel)\n";
    $epoll = new EpollDriver();
    $fresh = [];
    $first = measure(500, static function () use ($epoll, &$fresh): void {
        for ($i = 0; $i < 500; $i++) { // like a server: a new connection is watched at once
            array_push($fresh, ...idleSockets(1));
            $epoll->cancel($epoll->onReadable($fresh[2 * $i], static fn() => null));
        }
    });
    $first -= measure(500, static function (): void {
        for ($i = 0; $i < 500; $i++) {
            idleSockets(1);
        }
    });
    $again = measure(500, static function () use ($epoll, $fresh): void {
        for ($i = 0; $i < 1000; $i += 2) {
            $epoll->cancel($epoll->onReadable($fresh[$i], static fn() => null));
        }
    });
    $selectDriver = new SelectDriver();
    $selectWatch = measure(500, static function () use ($selectDriver, $fresh): void {
        for ($i = 0; $i < 1000; $i += 2) {
            $selectDriver->cancel($selectDriver->onReadable($fresh[$i], static fn() => null));
        }
    });
    report('SelectDriver watch + cancel', $selectWatch);
    report('EpollDriver first watch of a new stream (fd lookup)', $first, $selectWatch);
    report('EpollDriver watch again (fd cached)', $again, $selectWatch);
    $churn = measure(500, static function () use ($epoll): void {
        $previous = null;
        for ($i = 0; $i < 500; $i++) { // a connection closes, the next one reuses its fd
            if ($previous !== null) {
                $epoll->cancel($previous[0]);
                fclose($previous[1]);
                fclose($previous[2]);
            }
            [$a, $b] = idleSockets(1);
            $previous = [$epoll->onReadable($a, static fn() => null), $a, $b];
        }
    });
    report('EpollDriver close + new stream + watch (fd reuse)', $churn, $selectWatch);
    printf("full /proc/self/fd scans: %d\n", $epoll->fdScans());
} else {
    echo "EpollDriver: not supported here (needs Linux + ext-ffi)\n";
}
