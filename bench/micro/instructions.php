<?php

declare(strict_types=1);

/*
 * CPU instructions per request on the hot path, counted by callgrind: noise-free, so it can run while the
 * machine is busy (it takes about a minute per app under valgrind).
 *
 *   php bench/micro/instructions.php [app|bare|PATH|workerman[:URL-PATH] ...] [N]   default: bare app, N = 2000
 *   php bench/micro/instructions.php bare bench/micro/one-route.php app    the three stages: engine, App, + RequestId
 *   php bench/micro/instructions.php app:/json workerman:/json.php         another URL path (default /hello, /hello.php)
 *
 * `workerman` is Workerman 5 serving the same client (bench/micro/workerman.php): the target to beat.
 * `ws` and `workerman-ws` count a WebSocket echo message instead (bench/micro/ws-hotpath.php, ws-workerman.php).
 *
 * Runs bench/micro/hotpath.php for N and 2N requests (opcache on, JIT off: the JIT's output is not stable
 * enough to count) and prints (count(2N) - count(N)) / N, which leaves out start-up. Only the server
 * process is counted (hotpath's client is a forked child, reported separately by valgrind).
 */

$n = 2000;
$apps = [];
foreach (array_slice($argv, 1) as $arg) {
    if (ctype_digit($arg)) {
        $n = (int) $arg;
    } else {
        $apps[] = $arg;
    }
}
$apps = $apps === [] ? ['bare', 'app'] : $apps;

/** Instructions of the process valgrind started (the server), for $requests requests. */
$count = static function (string $app, int $requests): int {
    [$app, $path] = explode(':', $app, 2) + [1 => ''];
    $arguments = match ($app) {
        'workerman' => [__DIR__ . '/workerman.php', (string) $requests, $path ?: '/hello.php'],
        'ws' => [__DIR__ . '/ws-hotpath.php', (string) $requests],
        'workerman-ws' => [__DIR__ . '/ws-workerman.php', (string) $requests],
        default => [__DIR__ . '/hotpath.php', $app, (string) $requests, $path ?: '/hello'],
    };
    $command = 'valgrind --tool=callgrind --callgrind-out-file=/dev/null ' . escapeshellarg(PHP_BINARY)
        . ' -d opcache.enable_cli=1 -d opcache.jit=0 -d opcache.file_update_protection=0 '
        . implode(' ', array_map(escapeshellarg(...), $arguments)) . ' 2>&1';
    exec($command, $lines, $status);
    $output = implode("\n", $lines);
    if ($status !== 0 || preg_match('/^==(\d+)== Command:/m', $output, $parent) !== 1
        || preg_match('/^==' . $parent[1] . '== I\s+refs:\s+([\d,]+)/m', $output, $refs) !== 1) {
        fwrite(STDERR, "$command failed (exit $status):\n$output\n");
        exit(1);
    }
    return (int) str_replace(',', '', $refs[1]);
};

foreach ($apps as $app) {
    $perRequest = ($count($app, 2 * $n) - $count($app, $n)) / $n;
    $unit = \in_array($app, ['ws', 'workerman-ws'], true) ? 'message' : 'request';
    printf("%-40s %8.0f instructions/%s (N = %d)\n", $app, $perRequest, $unit, $n);
}
