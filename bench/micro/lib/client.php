<?php

declare(strict_types=1);

/**
 * The load of bench/micro/hotpath.php and workerman.php, in a forked child: blocking sockets, $connections
 * keep-alive connections, one `GET $target` in flight on each (like wrk), until $n responses came. Each
 * connection carries at most ceil($n / $connections) requests, so none reaches the server's keep-alive limit
 * (Limits::$keepAliveRequests, 10,000) while $n stays within $connections times that.
 * Returns the child's PID; its exit status is 0 when every response arrived. A client that fails (no
 * answer, a connection closed early) says why and ends its parent too, which would otherwise wait for
 * requests that never come.
 */
function hotpathClient(string $address, int $n, string $target, int $connections = 8): int
{
    $pid = pcntl_fork();
    if ($pid !== 0) {
        return $pid;
    }
    if (\function_exists('xdebug_stop_trace') && \function_exists('xdebug_get_tracefile_name') && xdebug_get_tracefile_name() !== false) {
        xdebug_stop_trace(); // bench/micro/calls.php counts the server's calls only
    }
    $request = "GET $target HTTP/1.1\r\nHost: localhost\r\nUser-Agent: hotpath\r\nAccept: */*\r\n\r\n";
    $sockets = [];
    for ($i = 0; $i < $connections; $i++) {
        $sockets[] = stream_socket_client("tcp://$address", $errno, $error, 5.0);
    }
    $fail = static function (string $why): never {
        fwrite(STDERR, "hotpath client: $why; stopping the server under test\n");
        posix_kill(posix_getppid(), SIGTERM);
        exit(1);
    };
    $quota = array_fill(0, $connections, intdiv($n, $connections));
    for ($i = 0; $i < $n % $connections; $i++) {
        $quota[$i]++;
    }
    $pending = [];
    foreach ($sockets as $i => $socket) {
        if ($quota[$i] > 0) {
            fwrite($socket, $request);
            $quota[$i]--;
            $pending[$i] = '';
        }
    }
    $done = 0;
    while ($pending !== []) {
        $read = array_map(static fn(int $i) => $sockets[$i], array_keys($pending));
        $write = $except = null;
        if (stream_select($read, $write, $except, 10) === 0) {
            $fail('no answer for 10 s');
        }
        foreach ($read as $socket) {
            $i = array_search($socket, $sockets, true);
            $chunk = fread($socket, 65536);
            if ($chunk === '' || $chunk === false) {
                $fail('connection closed early');
            }
            $pending[$i] .= $chunk;
            // Responses are Content-Length framed and small: a whole one has its head end and body.
            $end = strpos($pending[$i], "\r\n\r\n");
            if ($end === false || !preg_match('/Content-Length: (\d+)/i', $pending[$i], $m)
                || \strlen($pending[$i]) < $end + 4 + (int) $m[1]) {
                continue;
            }
            $done++;
            if ($quota[$i] > 0) {
                $pending[$i] = '';
                fwrite($socket, $request);
                $quota[$i]--;
            } else {
                unset($pending[$i]);
            }
        }
    }
    exit($done === $n ? 0 : 1);
}
