<?php

declare(strict_types=1);

/*
 * CPU cost per WebSocket message on Kiln's echo path: one process serves the messages of a forked client
 * (bench/micro/lib/ws-client.php: 8 connections × 16 messages of 32 bytes in flight) and stops after N.
 *
 *   php bench/micro/ws-hotpath.php [N]                      wall clock and server CPU per message
 *   php bench/micro/instructions.php ws workerman-ws        instructions per message, against Workerman 5
 */

require __DIR__ . '/../../src/bootstrap.php';
require __DIR__ . '/lib/ws-client.php';

use Kiln\App\App;
use Kiln\Http\HttpServer;
use Kiln\Http\Limits;
use Kiln\Http\WebSocket\Connection;
use Kiln\Http\WebSocket\Message;
use Kiln\Loop\Loop;
use Kiln\Server\AcceptBalance;
use Kiln\Server\WorkerContext;

$n = (int) ($argv[1] ?? 50000);

$listener = stream_socket_server('tcp://127.0.0.1:0', $errno, $error);
if ($listener === false) {
    throw new RuntimeException("listen: $error");
}
$address = (string) stream_socket_get_name($listener, false);

$handled = 0;
$app = new App();
$app->ws('/echo', static function (Connection $connection, Message $message) use (&$handled, $n): void {
    $connection->send($message->payload);
    if (++$handled === $n) {
        Loop::stop();
    }
});

$context = new class implements WorkerContext {
    public function requestServed(): void {}

    public function log(string $level, string $message): void
    {
        fwrite(STDERR, "[$level] $message\n");
    }

    public function workerId(): int
    {
        return 1;
    }

    public function acceptBalance(): ?AcceptBalance
    {
        return null;
    }

    public function retiring(string $reason): float
    {
        return 0.0;
    }

    public function drainTimeout(): float
    {
        return 0.0;
    }

    public function count(string $name, int $value): void {}

    public function metrics(): ?Kiln\Server\Metrics\Registry
    {
        return null;
    }
};

$server = new HttpServer($app, new Limits());
$server->start([$listener], $context);
$pid = wsHotpathClient($address, '/echo');
$cpu = static function (): float {
    $usage = getrusage();
    return $usage['ru_utime.tv_sec'] * 1e6 + $usage['ru_utime.tv_usec'] + $usage['ru_stime.tv_sec'] * 1e6 + $usage['ru_stime.tv_usec'];
};
$start = hrtime(true);
$cpuStart = $cpu();
Loop::run();
$ns = hrtime(true) - $start;
$cpuUs = $cpu() - $cpuStart;
posix_kill($pid, SIGKILL);
pcntl_waitpid($pid, $status);
if ($handled < $n) { // Loop::stop() ends the loop after the current tick: a few more may have been handled
    fwrite(STDERR, "handled $handled of $n\n");
    exit(1);
}
printf("ws: %d messages over 8 connections, %.2f µs/message wall clock (client included), %.2f µs/message server CPU\n", $handled, $ns / 1e3 / $handled, $cpuUs / $handled);
