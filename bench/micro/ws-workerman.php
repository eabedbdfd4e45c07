<?php

declare(strict_types=1);

/*
 * Workerman 5's cost per WebSocket message under the load of ws-hotpath.php, so Kiln's count has a target:
 * one process, Workerman's select loop, each message echoed (as ../shared/peers/workerman/ws.php does),
 * stopped after N.
 *
 *   php bench/micro/ws-workerman.php [N]
 *   php bench/micro/instructions.php ws workerman-ws
 *
 * Workerman's source is used where it is (WORKERMAN_SRC, default ../shared/peers/workerman), never copied.
 */

require __DIR__ . '/lib/ws-client.php';

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
use Workerman\Worker;

$n = (int) ($argv[1] ?? 50000);

$probe = stream_socket_server('tcp://127.0.0.1:0');
\assert($probe !== false);
$address = (string) stream_socket_get_name($probe, false);
fclose($probe);

$handled = 0;
Worker::$globalEvent = new Select();
$worker = new Worker("websocket://$address");
$worker->onMessage = static function (TcpConnection $connection, string $data) use (&$handled, $n): void {
    $connection->send($data);
    if (++$handled === $n) {
        Worker::$globalEvent->stop();
    }
};
$worker->listen();

$pid = wsHotpathClient($address, '/echo');
$cpu = static function (): float {
    $usage = getrusage();
    return $usage['ru_utime.tv_sec'] * 1e6 + $usage['ru_utime.tv_usec'] + $usage['ru_stime.tv_sec'] * 1e6 + $usage['ru_stime.tv_usec'];
};
$start = hrtime(true);
$cpuStart = $cpu();
Worker::$globalEvent->run();
$ns = hrtime(true) - $start;
$cpuUs = $cpu() - $cpuStart;
posix_kill($pid, SIGKILL);
pcntl_waitpid($pid, $status);
if ($handled < $n) {
    fwrite(STDERR, "handled $handled of $n\n");
    exit(1);
}
printf("workerman-ws: %d messages over 8 connections, %.2f µs/message wall clock (client included), %.2f µs/message server CPU\n", $handled, $ns / 1e3 / $handled, $cpuUs / $handled);
