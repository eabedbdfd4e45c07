<?php

declare(strict_types=1);

/*
 * CPU cost per request on the hot path: one process serves N keep-alive `GET /hello` requests sent by a
 * forked client over 8 connections, one request in flight per connection (like wrk).
 *
 *   php bench/micro/hotpath.php [app|bare|PATH] [N] [URL-PATH]       wall clock (use JIT for a sanity check)
 *   php bench/micro/hotpath.php bench/apps/site.php 20000 /hello.php   the sequential tier
 *   HOTPATH_DRIVER=epoll php bench/micro/hotpath.php bare    the epoll driver, as `kiln serve` picks it by default
 *   valgrind --tool=callgrind --callgrind-out-file=/tmp/cg.out \
 *     php -d opcache.enable_cli=1 -d opcache.jit=0 bench/micro/hotpath.php app 20000
 *
 * N is at most 80,000: each of the 8 connections carries N / 8 requests, and the server closes a connection
 * after 10,000 (Limits::$keepAliveRequests). Past that, the client says so and stops the server.
 *
 * Instructions per request: run with N and 2N and divide the difference by N (removes start-up cost);
 * bench/micro/instructions.php does that. The client lives in a forked child, so callgrind reports it
 * apart: only the server (the parent) counts.
 */

require __DIR__ . '/../../src/bootstrap.php';
require __DIR__ . '/lib/client.php';
require __DIR__ . '/lib/context.php';
require __DIR__ . '/lib/measure.php';

use Kiln\App\App;
use Kiln\Http\HttpServer;
use Kiln\Http\Limits;
use Kiln\Loop\Loop;

$which = $argv[1] ?? 'app';
$n = (int) ($argv[2] ?? 20000);
$target = $argv[3] ?? '/hello';
$connections = 8;
$app = match ($which) {
    'app' => __DIR__ . '/../../examples/hello/app.php',
    'bare' => __DIR__ . '/../apps/bare.php',
    default => is_file($which) ? $which : throw new ValueError("Unknown app '$which' (app, bare, or a path)"),
};

// The driver `kiln serve` uses with its default --connections is epoll (select stays the default here).
if (getenv('HOTPATH_DRIVER') === 'epoll') {
    Loop::set(new Kiln\Loop\Driver\EpollDriver());
}

$listener = stream_socket_server('tcp://127.0.0.1:0', $errno, $error);
if ($listener === false) {
    throw new RuntimeException("listen: $error");
}
$address = stream_socket_get_name($listener, false);

$pid = hotpathClient($address, $n, $target, $connections);

$context = new BenchWorkerContext($n);

$server = new HttpServer(App::load($app), new Limits());
$server->start([$listener], $context);
[$ns, $cpuUs] = measureRun(Loop::run(...));
$server->stop();
pcntl_waitpid($pid, $status);
if ($context->served !== $n || pcntl_wexitstatus($status) !== 0) {
    fwrite(STDERR, "served {$context->served} of $n, client exit " . pcntl_wexitstatus($status) . "\n");
    exit(1);
}
printf("%s: %d requests over %d connections, %.2f µs/request wall clock (client included), %.2f µs/request server CPU\n", $which, $n, $connections, $ns / 1e3 / $n, $cpuUs / $n);
