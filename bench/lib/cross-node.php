<?php

declare(strict_types=1);

/*
 * Cross-node publish latency for `bench/run state`: MEMBERS WebSocket clients join the room on node B, then
 * MESSAGES are published through node A (`POST /publish/{room}` of examples/realtime/app.php, which broadcasts
 * to the room of the same name), RATE per second, each carrying its send time; every member records how long
 * each message took to reach it. Prints "p50_ms p99_ms max_ms delivered expected".
 *
 *   php bench/lib/cross-node.php A_PORT B_PORT [MEMBERS=100] [MESSAGES=200] [RATE=50]
 */

[$aPort, $bPort] = [(int) ($argv[1] ?? 0), (int) ($argv[2] ?? 0)];
$members = (int) ($argv[3] ?? 100);
$messages = (int) ($argv[4] ?? 200);
$rate = (float) ($argv[5] ?? 50);
$room = 'bench' . bin2hex(random_bytes(3));

/** @return resource a WebSocket connection to the room on $port, past its 101 and welcome frame */
function joinRoom(int $port, string $room): mixed
{
    $socket = stream_socket_client("tcp://127.0.0.1:$port", $errno, $error, 5.0);
    if ($socket === false) {
        fwrite(STDERR, "connect: $error\n");
        exit(1);
    }
    fwrite($socket, "GET /ws/rooms/$room HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        . "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n");
    $head = '';
    while (!str_contains($head, "\r\n\r\n")) {
        $chunk = fread($socket, 4096);
        if ($chunk === '' || $chunk === false) {
            fwrite(STDERR, "handshake failed\n");
            exit(1);
        }
        $head .= $chunk;
    }
    if (!str_starts_with($head, 'HTTP/1.1 101')) {
        fwrite(STDERR, 'refused: ' . strtok($head, "\r") . "\n");
        exit(1);
    }
    stream_set_blocking($socket, false);
    return $socket;
}

/** Whole unmasked frames at the start of $buffer (taken off it): their payloads. */
function frames(string &$buffer): array
{
    $out = [];
    while (\strlen($buffer) >= 2) {
        $length = \ord($buffer[1]) & 0x7F;
        $head = 2;
        if ($length === 126) {
            if (\strlen($buffer) < 4) {
                break;
            }
            $length = unpack('n', $buffer, 2)[1];
            $head = 4;
        } elseif ($length === 127) {
            if (\strlen($buffer) < 10) {
                break;
            }
            $length = unpack('J', $buffer, 2)[1];
            $head = 10;
        }
        if (\strlen($buffer) < $head + $length) {
            break;
        }
        $out[] = substr($buffer, $head, $length);
        $buffer = substr($buffer, $head + $length);
    }
    return $out;
}

function publish(int $port, string $room, string $body): void
{
    $socket = stream_socket_client("tcp://127.0.0.1:$port", $errno, $error, 5.0);
    if ($socket === false) {
        fwrite(STDERR, "publish connect: $error\n");
        exit(1);
    }
    fwrite($socket, "POST /publish/$room HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/plain\r\nContent-Length: "
        . \strlen($body) . "\r\nConnection: close\r\n\r\n$body");
    $answer = stream_get_contents($socket);
    fclose($socket);
    if (!str_starts_with((string) $answer, 'HTTP/1.1 200')) {
        fwrite(STDERR, 'publish: ' . strtok((string) $answer, "\r") . "\n");
        exit(1);
    }
}

$sockets = [];
$buffers = [];
for ($i = 0; $i < $members; $i++) {
    $sockets[$i] = joinRoom($bPort, $room);
    $buffers[$i] = '';
}
$latencies = [];
$probes = 0;
$read = static function (float $until) use (&$sockets, &$buffers, &$latencies, &$probes): void {
    do {
        $ready = $sockets;
        $write = $except = null;
        $wait = max(0.0, $until - microtime(true));
        if (@stream_select($ready, $write, $except, (int) $wait, (int) (fmod($wait, 1.0) * 1e6)) === 0) {
            return;
        }
        foreach ($ready as $i => $socket) {
            $buffers[$i] .= (string) fread($socket, 65536);
            foreach (frames($buffers[$i]) as $payload) {
                if (preg_match('/^t=([0-9.]+)$/', $payload, $m) === 1) {
                    $latencies[] = (microtime(true) - (float) $m[1]) * 1000;
                } elseif ($payload === 'probe') {
                    $probes++;
                }
            }
        }
    } while (microtime(true) < $until);
};
// The members' workers follow the room at Redis shortly after they joined: probe until every member hears one.
$deadline = microtime(true) + 10.0;
do {
    $probes = 0;
    publish($aPort, $room, 'probe');
    $read(microtime(true) + 0.3);
} while ($probes < $members && microtime(true) < $deadline);
$read(microtime(true) + 0.5);
$interval = 1.0 / $rate;
$next = microtime(true);
for ($n = 0; $n < $messages; $n++) {
    publish($aPort, $room, sprintf('t=%.6f', microtime(true)));
    $next += $interval;
    $read($next);
}
$read(microtime(true) + 2.0);
sort($latencies);
$count = \count($latencies);
$at = static fn(float $q): float => $count === 0 ? 0.0 : $latencies[min($count - 1, (int) floor($q * ($count - 1)))];
printf("%.2f %.2f %.2f %d %d\n", $at(0.5), $at(0.99), $count === 0 ? 0.0 : $latencies[$count - 1], $count, $members * $messages);
