<?php

declare(strict_types=1);

/**
 * The load of bench/micro/hotpath.php and workerman.php, in a forked child: blocking sockets, $connections
 * keep-alive connections, one `GET $target` in flight on each (like wrk), round-robin, until $n responses came.
 * Returns the child's PID; its exit status is 0 when every response arrived.
 */
function hotpathClient(string $address, int $n, string $target, int $connections = 8): int
{
    $pid = pcntl_fork();
    if ($pid !== 0) {
        return $pid;
    }
    $request = "GET $target HTTP/1.1\r\nHost: localhost\r\nUser-Agent: hotpath\r\nAccept: */*\r\n\r\n";
    $sockets = [];
    for ($i = 0; $i < $connections; $i++) {
        $sockets[] = stream_socket_client("tcp://$address", $errno, $error, 5.0);
    }
    $pending = [];
    $sent = 0;
    foreach ($sockets as $i => $socket) {
        if ($sent < $n) {
            fwrite($socket, $request);
            $sent++;
            $pending[$i] = '';
        }
    }
    $done = 0;
    while ($pending !== []) {
        $read = array_map(static fn(int $i) => $sockets[$i], array_keys($pending));
        $write = $except = null;
        if (stream_select($read, $write, $except, 10) === 0) {
            fwrite(STDERR, "no answer for 10 s\n");
            exit(1);
        }
        foreach ($read as $socket) {
            $i = array_search($socket, $sockets, true);
            $chunk = fread($socket, 65536);
            if ($chunk === '' || $chunk === false) {
                fwrite(STDERR, "connection closed early\n");
                exit(1);
            }
            $pending[$i] .= $chunk;
            // Responses are Content-Length framed and small: a whole one has its head end and body.
            $end = strpos($pending[$i], "\r\n\r\n");
            if ($end === false || !preg_match('/Content-Length: (\d+)/i', $pending[$i], $m)
                || \strlen($pending[$i]) < $end + 4 + (int) $m[1]) {
                continue;
            }
            $done++;
            if ($sent < $n) {
                $pending[$i] = '';
                fwrite($socket, $request);
                $sent++;
            } else {
                unset($pending[$i]);
            }
        }
    }
    exit($done === $n ? 0 : 1);
}
