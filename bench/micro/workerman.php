<?php

declare(strict_types=1);

/*
 * Workerman 5's cost per request under the load of hotpath.php, so Kiln's instruction counts have a target:
 * one process, Workerman's select loop, the answers of ../shared/peers/workerman/http.php (`/hello.php` text,
 * `/json.php` JSON, and its Connection: close check), served to the same forked client, stopped after N.
 *
 *   php bench/micro/workerman.php [N] [/hello.php|/json.php]
 *   php bench/micro/instructions.php workerman workerman:/json.php     instructions per request
 *
 * Workerman's source is used where it is (WORKERMAN_SRC, default ../shared/peers/workerman), never copied.
 */

require __DIR__ . '/lib/client.php';
require __DIR__ . '/lib/measure.php';
require __DIR__ . '/lib/workerman.php';

loadWorkerman();

use Workerman\Connection\TcpConnection;
use Workerman\Events\Select;
use Workerman\Protocols\Http\Request;
use Workerman\Protocols\Http\Response;
use Workerman\Worker;

$n = (int) ($argv[1] ?? 20000);
$target = $argv[2] ?? '/hello.php';

// Workerman binds by address.
$address = freeAddress();

$served = 0;
Worker::$globalEvent = new Select();
$worker = new Worker("http://$address");
$worker->onMessage = static function (TcpConnection $connection, Request $request) use (&$served, $n): void {
    // As http.php answers.
    $response = $request->path() === '/json.php'
        ? new Response(200, ['Content-Type' => 'application/json'], json_encode(['message' => 'Hello, World!']))
        : new Response(200, ['Content-Type' => 'text/plain'], 'Hello, World!');
    $head = $request->rawHead();
    $close = $request->protocolVersion() === '1.0'
        ? stripos($head, "\r\nconnection: keep-alive") === false
        : stripos($head, "\r\nconnection: close") !== false;
    if ($close) {
        $connection->close($response->withHeader('Connection', 'close'));
    } else {
        $connection->send($response);
    }
    if (++$served === $n) {
        Worker::$globalEvent->stop();
    }
};
$worker->listen();

$pid = hotpathClient($address, $n, $target);
[$ns, $cpuUs] = measureRun(static fn() => Worker::$globalEvent->run());
// The last responses were handed to the kernel by send(); the client is waiting for them.
pcntl_waitpid($pid, $status);
if ($served !== $n || pcntl_wexitstatus($status) !== 0) {
    fwrite(STDERR, "served $served of $n, client exit " . pcntl_wexitstatus($status) . "\n");
    exit(1);
}
printf("workerman: %d requests over 8 connections, %.2f µs/request wall clock (client included), %.2f µs/request server CPU\n", $n, $ns / 1e3 / $n, $cpuUs / $n);
