<?php

declare(strict_types=1);

/**
 * The load of bench/micro/ws-hotpath.php and ws-workerman.php, in a forked child: $connections WebSocket
 * connections to $path, each keeping $inflight masked 32-byte text messages in flight (like bench/lib/wsbench.c's
 * echo mode), until the parent stops it with SIGTERM. Returns the child's PID.
 */
function wsHotpathClient(string $address, string $path, int $connections = 8, int $inflight = 16): int
{
    $pid = pcntl_fork();
    if ($pid !== 0) {
        return $pid;
    }
    $payload = str_repeat('0123456789abcdef', 2);
    $mask = "\x11\x22\x33\x44";
    $frame = "\x81" . \chr(0x80 | \strlen($payload)) . $mask . ($payload ^ str_repeat($mask, 8));
    $serverFrame = 2 + \strlen($payload); // unmasked, FIN + text, 7-bit length
    $sockets = [];
    $buffers = [];
    for ($i = 0; $i < $connections; $i++) {
        $socket = stream_socket_client("tcp://$address", $errno, $error, 5.0);
        if ($socket === false) {
            fwrite(STDERR, "connect: $error\n");
            exit(1);
        }
        fwrite($socket, "GET $path HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            . "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n");
        $head = '';
        while (!str_contains($head, "\r\n\r\n")) {
            $chunk = fread($socket, 4096);
            if ($chunk === '' || $chunk === false) {
                fwrite(STDERR, "handshake: connection closed\n");
                exit(1);
            }
            $head .= $chunk;
        }
        if (!str_starts_with($head, 'HTTP/1.1 101')) {
            fwrite(STDERR, "handshake refused: " . strtok($head, "\r") . "\n");
            exit(1);
        }
        $buffers[$i] = substr($head, strpos($head, "\r\n\r\n") + 4);
        $sockets[$i] = $socket;
        fwrite($socket, str_repeat($frame, $inflight));
    }
    while (true) {
        $read = $sockets;
        $write = $except = null;
        if (@stream_select($read, $write, $except, 10) === 0) {
            fwrite(STDERR, "no echo for 10 s\n");
            exit(1);
        }
        foreach ($read as $i => $socket) {
            $chunk = fread($socket, 65536);
            if ($chunk === '' || $chunk === false) {
                exit(0); // the server is gone: the parent is done
            }
            $buffers[$i] .= $chunk;
            $whole = intdiv(\strlen($buffers[$i]), $serverFrame);
            if ($whole > 0) {
                $buffers[$i] = substr($buffers[$i], $whole * $serverFrame);
                fwrite($socket, str_repeat($frame, $whole));
            }
        }
    }
}
