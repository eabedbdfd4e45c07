<?php

declare(strict_types=1);

/*
 * The node bus between 2 worker processes: `php bench/micro/bus.php [rounds]`.
 * Each run forks a publisher and a subscriber (RelayLink + RelayBus, the code a worker runs) and this
 * process plays the supervisor (WorkerPool + BusRelay, the code Supervisor runs), or, for comparison, the
 * two are joined by one socket pair ("direct": the hop a mesh of worker sockets would make).
 * - latency: 2,000 messages of 64 bytes, one every 0.5 ms; publish() to the subscriber's listener, hrtime.
 * - throughput: 200,000 messages of 64 bytes published as fast as the queue takes them; messages/s at the
 *   subscriber, and CPU (user + system) per message summed over the processes taking part.
 * - large: 200 messages of 1 MiB; MiB/s at the subscriber.
 */

use Kiln\Loop\Driver\SelectDriver;
use Kiln\Loop\Loop;
use Kiln\Server\BusRelay;
use Kiln\Server\Log;
use Kiln\Server\LogFile;
use Kiln\Server\Message;
use Kiln\Server\RelayLink;
use Kiln\Server\WorkerPool;
use Kiln\Store\BusException;
use Kiln\Store\RelayBus;

require __DIR__ . '/../../src/bootstrap.php';

function cpu(): float
{
    $u = getrusage();
    return $u['ru_utime.tv_sec'] + $u['ru_utime.tv_usec'] / 1e6 + $u['ru_stime.tv_sec'] + $u['ru_stime.tv_usec'] / 1e6;
}

/** @param resource $stream */
function worker(int $slot, mixed $stream, string $test, string $out): void
{
    Loop::set(new SelectDriver());
    $link = new RelayLink($stream);
    $link->start();
    $bus = new RelayBus($link);
    $cpu = cpu();
    $result = ['slot' => $slot];
    if ($slot === 2) {
        $count = 0;
        $latencies = [];
        $first = $last = 0;
        $want = ['latency' => 2000, 'throughput' => 200_000, 'large' => 200][$test];
        $bus->subscribe('bench', static function (string $channel, string $payload) use (&$count, &$latencies, &$first, &$last, $test, $want, &$result, $cpu): void {
            $now = hrtime(true);
            $first = $first ?: $now;
            $last = $now;
            if ($test === 'latency') {
                $latencies[] = ($now - unpack('J', $payload)[1]) / 1000;
            }
            if (++$count === $want) {
                sort($latencies);
                $result += ['count' => $count, 'seconds' => ($last - $first) / 1e9, 'cpu' => cpu() - $cpu, 'latencies' => $latencies];
                Loop::stop();
            }
        });
        Loop::delay(120, static fn() => Loop::stop());
        Loop::run();
    } else {
        usleep(200_000); // the subscriber is attached and listening
        $cpu = cpu();
        if ($test === 'latency') {
            $sent = 0;
            Loop::repeat(0.0005, static function (string $id) use ($bus, &$sent): void {
                $bus->publish('bench', str_pad(pack('J', hrtime(true)), 64, '.'));
                if (++$sent === 2000) {
                    Loop::cancel($id);
                }
            });
        } else {
            [$total, $payload] = $test === 'large' ? [200, str_repeat('L', 1 << 20)] : [200_000, str_repeat('s', 64)];
            $sent = 0;
            $more = static function () use (&$more, &$sent, $total, $payload, $bus, $link): void {
                try {
                    // Publish while the queue to the supervisor has room (a refused publish() costs its copies).
                    for ($i = 0; $i < 2000 && $sent < $total && $link->queued() + 2 * \strlen($payload) < RelayLink::QUEUE_LIMIT; $i++) {
                        $bus->publish('bench', $payload);
                        $sent++;
                    }
                } catch (BusException) {
                    // the queue to the supervisor is full: go on once it drained a little
                }
                if ($sent < $total) {
                    Loop::delay(0.0005, $more);
                }
            };
            Loop::defer($more);
        }
        Loop::repeat(0.001, static function () use (&$sent, $link, $test): void {
            if ($sent === ($test === 'latency' ? 2000 : ($test === 'large' ? 200 : 200_000)) && $link->queued() === 0) {
                Loop::stop();
            }
        });
        Loop::run();
        $result['cpu'] = cpu() - $cpu;
    }
    file_put_contents("$out.$slot", json_encode($result));
    pcntl_exec(PHP_BINARY, ['-n', '-r', 'exit(0);']);
}

/** @return array{array<string, mixed>, array<string, mixed>, float} subscriber, publisher, CPU of this process */
function run(string $mode, string $test): array
{
    $out = tempnam(sys_get_temp_dir(), 'kiln-bus-bench-');
    if ($mode === 'relay') {
        $pool = new WorkerPool(static function (int $slot, mixed $channel, mixed $bus) use ($test, $out): int {
            worker($slot, $bus, $test, $out);
            return 0;
        }, new BusRelay(new Log(new LogFile('php://stderr'))));
        $cpu = cpu();
        $pool->spawn(2, 1);
        $pool->spawn(1, 1);
        while (!$pool->isEmpty()) {
            $pool->read(0.05);
            $pool->reap();
        }
        $cpu = cpu() - $cpu;
    } else {
        [$a, $b] = stream_socket_pair(STREAM_PF_UNIX, STREAM_SOCK_STREAM, STREAM_IPPROTO_IP);
        $pids = [];
        foreach ([2 => $b, 1 => $a] as $slot => $end) {
            $pid = pcntl_fork();
            if ($pid === 0) {
                worker($slot, $end, $test, $out);
            }
            $pids[] = $pid;
        }
        foreach ($pids as $pid) {
            pcntl_waitpid($pid, $status);
        }
        $cpu = 0.0;
    }
    $sub = json_decode((string) @file_get_contents("$out.2"), true) ?: [];
    $pub = json_decode((string) @file_get_contents("$out.1"), true) ?: [];
    @unlink($out);
    @unlink("$out.1");
    @unlink("$out.2");
    return [$sub, $pub, $cpu];
}

$rounds = (int) ($argv[1] ?? 3);
printf("node bus, 2 workers, %d round(s) each; %s, %d cores, load %s\n", $rounds, PHP_VERSION, (int) shell_exec('nproc'), implode(' ', array_map(static fn($l) => sprintf('%.1f', $l), sys_getloadavg() ?: [])));
foreach (['relay', 'direct'] as $mode) {
    for ($round = 1; $round <= $rounds; $round++) {
        [$sub] = run($mode, 'latency');
        $l = $sub['latencies'] ?? [];
        $n = count($l);
        [$tsub, $tpub, $tsup] = run($mode, 'throughput');
        [$lsub] = run($mode, 'large');
        printf(
            "%-6s latency p50 %5.0f µs  p99 %6.0f µs  max %6.0f µs (%d msgs) | 64 B: %7.0f msgs/s, CPU %4.1f µs/msg (pub %.1f, sub %.1f, supervisor %.1f) | 1 MiB: %5.0f MiB/s\n",
            $mode,
            $n ? $l[(int) ($n * 0.50)] : -1,
            $n ? $l[(int) ($n * 0.99)] : -1,
            $n ? $l[$n - 1] : -1,
            $n,
            ($tsub['count'] ?? 0) / max(1e-9, $tsub['seconds'] ?? 0),
            (($tpub['cpu'] ?? 0) + ($tsub['cpu'] ?? 0) + $tsup) / 200_000 * 1e6,
            ($tpub['cpu'] ?? 0) / 200_000 * 1e6,
            ($tsub['cpu'] ?? 0) / 200_000 * 1e6,
            $tsup / 200_000 * 1e6,
            ($lsub['count'] ?? 0) / max(1e-9, $lsub['seconds'] ?? 0),
        );
    }
}
