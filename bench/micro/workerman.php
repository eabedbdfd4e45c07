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

$src = getenv('WORKERMAN_SRC') ?: __DIR__ . '/../../../shared/peers/workerman';
if (!is_file("$src/src/Worker.php")) {
    fwrite(STDERR, "Workerman's source is not at $src (set WORKERMAN_SRC)\n");
    exit(1);
}
spl_autoload_register(static function (string $class) use ($src): void {
    if (str_starts_with($class, 'Workerman\\')) {
        $file = $src . '/src/' . str_replace('\\', '/', substr($class, 10)) . '.php';
        if (is_file($file)) {
            require $file;
        }
    }
});

use Workerman\Connection\TcpConnection;
use Workerman\Events\Select;
use Workerman\Protocols\Http\Request;
use Workerman\Protocols\Http\Response;
use Workerman\Worker;

$n = (int) ($argv[1] ?? 20000);
$target = $argv[2] ?? '/hello.php';

// A free port: Workerman binds by address.
$probe = stream_socket_server('tcp://127.0.0.1:0');
\assert($probe !== false);
$address = (string) stream_socket_get_name($probe, false);
fclose($probe);

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
$cpu = static function (): float {
    $usage = getrusage();
    return $usage['ru_utime.tv_sec'] * 1e6 + $usage['ru_utime.tv_usec'] + $usage['ru_stime.tv_sec'] * 1e6 + $usage['ru_stime.tv_usec'];
};
$start = hrtime(true);
$cpuStart = $cpu();
Worker::$globalEvent->run();
$ns = hrtime(true) - $start;
$cpuUs = $cpu() - $cpuStart;
// The last responses were handed to the kernel by send(); the client is waiting for them.
pcntl_waitpid($pid, $status);
if ($served !== $n || pcntl_wexitstatus($status) !== 0) {
    fwrite(STDERR, "served $served of $n, client exit " . pcntl_wexitstatus($status) . "\n");
    exit(1);
}
printf("workerman: %d requests over 8 connections, %.2f µs/request wall clock (client included), %.2f µs/request server CPU\n", $n, $ns / 1e3 / $n, $cpuUs / $n);
