<?php

declare(strict_types=1);

// The floor of any PHP HTTP server on this machine: N processes (SO_REUSEPORT), a stream_select() loop, one
// fread() per readable connection and one fwrite() of constant bytes back. No parsing, no objects, no framing
// checks: what every PHP server spends per request at the least. bench/run's `php-floor` stack; it needs no Kiln
// code and is not a server for anything else (an HTTP/1.0 request is answered and closed; anything else is
// answered as if it were one keep-alive GET).
//
//   php [-d …] bench/peers/php-floor.php PORT [WORKERS]

$port = (int) ($argv[1] ?? 0);
$workers = max(1, (int) ($argv[2] ?? 2));
if ($port <= 0) {
    fwrite(STDERR, "usage: php php-floor.php PORT [WORKERS]\n");
    exit(2);
}
// The same bytes as Kiln's /hello answer, so both send as much.
$response = "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nDate: Sat, 28 Nov 2026 00:00:00 GMT\r\n"
    . "Server: php-floor\r\nContent-Length: 13\r\n\r\nHello, World!";
$children = [];
for ($i = 0; $i < $workers; $i++) {
    $pid = pcntl_fork();
    if ($pid === 0) {
        $context = stream_context_create(['socket' => ['so_reuseport' => true, 'backlog' => 4096]]);
        $server = stream_socket_server("tcp://127.0.0.1:$port", $errno, $error, STREAM_SERVER_BIND | STREAM_SERVER_LISTEN, $context);
        if ($server === false) {
            fwrite(STDERR, "php-floor: cannot listen on 127.0.0.1:$port: $error\n");
            exit(1);
        }
        stream_set_blocking($server, false);
        $clients = [];
        while (true) {
            $read = $clients;
            $read[] = $server;
            $write = $except = null;
            if (@stream_select($read, $write, $except, 1) < 1) {
                continue;
            }
            foreach ($read as $socket) {
                if ($socket === $server) {
                    $client = @stream_socket_accept($server, 0);
                    if ($client !== false) {
                        stream_set_blocking($client, false);
                        stream_set_read_buffer($client, 0);
                        stream_set_write_buffer($client, 0);
                        $clients[(int) $client] = $client;
                    }
                    continue;
                }
                $data = @fread($socket, 65536);
                if ($data === '' || $data === false) {
                    if ($data === false || feof($socket)) {
                        unset($clients[(int) $socket]);
                        fclose($socket);
                    }
                    continue;
                }
                @fwrite($socket, $response);
                if (str_contains($data, " HTTP/1.0\r\n")) {
                    unset($clients[(int) $socket]);
                    fclose($socket);
                }
            }
        }
    }
    $children[] = $pid;
}
pcntl_async_signals(true);
$stop = static function () use ($children): void {
    foreach ($children as $pid) {
        posix_kill($pid, SIGTERM);
    }
    exit(0);
};
pcntl_signal(SIGTERM, $stop);
pcntl_signal(SIGINT, $stop);
while (pcntl_wait($status) > 0) {
}
