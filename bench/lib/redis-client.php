<?php

declare(strict_types=1);

/*
 * Kiln's Redis client under load, for `bench/run redis`: FIBERS Fibers share one RedisClient (one
 * pipelined connection by default) and each loops SET then GET of its own key for SECONDS seconds.
 * Prints one line: `<commands/s> <commands> <seconds> <client CPU µs per command>` (CPU time, user and
 * system, says what the client costs whatever else the machine runs).
 *
 *   php bench/lib/redis-client.php PORT [FIBERS=64] [SECONDS=10] [POOL=1]
 */

use function Kiln\Loop\all;
use function Kiln\Loop\async;

use Kiln\Redis\RedisClient;

require __DIR__ . '/autoload.php';

$port = (int) ($argv[1] ?? 0);
$fibers = (int) ($argv[2] ?? 64);
$seconds = (float) ($argv[3] ?? 10);
$pool = (int) ($argv[4] ?? 1);
if ($port <= 0 || $fibers <= 0 || $seconds <= 0) {
    fwrite(STDERR, "usage: php bench/lib/redis-client.php PORT [FIBERS] [SECONDS] [POOL]\n");
    exit(2);
}
$client = RedisClient::fromUri("redis://127.0.0.1:$port?pool=$pool&timeout=30");
$value = str_repeat('x', 3); // redis-benchmark's default payload is 3 bytes
$count = 0;
$end = 0.0;
$run = static function (int $fiber) use ($client, $value, &$count, &$end): void {
    $key = "key:$fiber";
    while (hrtime(true) < $end) {
        $client->set($key, $value);
        $client->get($key);
        $count += 2;
    }
};
async(static fn() => $client->command('PING'))->await();
$usage = getrusage();
$start = hrtime(true);
$end = $start + (int) ($seconds * 1e9);
$futures = [];
for ($i = 0; $i < $fibers; $i++) {
    $futures[] = async(static fn() => $run($i));
}
all($futures);
$elapsed = (hrtime(true) - $start) / 1e9;
$cpu = static fn(array $u): float => $u['ru_utime.tv_sec'] + $u['ru_stime.tv_sec'] + ($u['ru_utime.tv_usec'] + $u['ru_stime.tv_usec']) / 1e6;
$cpuPerCommand = ($cpu(getrusage()) - $cpu($usage)) / max(1, $count) * 1e6;
$client->close();
printf("%.0f %d %.3f %.2f\n", $count / $elapsed, $count, $elapsed, $cpuPerCommand);
