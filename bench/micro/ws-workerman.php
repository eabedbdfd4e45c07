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
require __DIR__ . '/lib/measure.php';
require __DIR__ . '/lib/workerman.php';

loadWorkerman();

use Workerman\Connection\TcpConnection;
use Workerman\Events\Select;
use Workerman\Worker;

$n = (int) ($argv[1] ?? 50000);

$address = freeAddress();

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
[$ns, $cpuUs] = measureRun(static fn() => Worker::$globalEvent->run());
posix_kill($pid, SIGKILL);
pcntl_waitpid($pid, $status);
if ($handled < $n) {
    fwrite(STDERR, "handled $handled of $n\n");
    exit(1);
}
printf("workerman-ws: %d messages over 8 connections, %.2f µs/message wall clock (client included), %.2f µs/message server CPU\n", $handled, $ns / 1e3 / $handled, $cpuUs / $handled);
