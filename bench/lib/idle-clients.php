<?php

declare(strict_types=1);

/*
 * Opens N keep-alive connections to one HTTP server, sends one GET on each, reads each response
 * completely, and then keeps every connection open and idle so the server's memory per idle
 * connection can be measured.
 *
 *   php bench/lib/idle-clients.php --port=P --n=N [--host=127.0.0.1] [--path=/hello]
 *       [--batch=200] [--timeout=120] [--stall=20] [--hold=300] [--release-file=FILE]
 *
 * --timeout bounds the whole opening phase; --stall gives up earlier when nothing at all happened
 * (no connect, no byte sent or received) for that many seconds.
 *
 * stdout, one JSON object per line:
 *   1. once every connection has a complete response, failed, or --timeout passed:
 *      {"phase":"established","n":…,"ok":…,"failed":…,"pending":…,"statuses":{…},"errors":{…},"seconds":…}
 *   2. after the hold (--hold seconds, or earlier when --release-file exists):
 *      {"phase":"released","still_open":…,"closed_by_server":…}
 *
 * No stream_select(): it breaks above fd 1024 (FD_SETSIZE), and this client holds thousands of
 * sockets. Every socket is non-blocking and polled in a loop that sleeps 1 ms when a pass made no
 * progress. At most --batch connections are in the connect/request/response phase at once, so the
 * server's accept backlog is never flooded.
 */

$opt = ['host' => '127.0.0.1', 'port' => '', 'path' => '/hello', 'n' => '', 'batch' => '200',
    'timeout' => '120', 'stall' => '20', 'hold' => '300', 'release-file' => ''];
foreach (array_slice($argv, 1) as $a) {
    if (!preg_match('/^--([a-z-]+)=(.*)$/s', $a, $m) || !array_key_exists($m[1], $opt)) {
        fwrite(STDERR, "idle-clients: unknown argument {$a}\n");
        exit(2);
    }
    $opt[$m[1]] = $m[2];
}
$n = (int) $opt['n'];
$port = (int) $opt['port'];
if ($n < 1 || $port < 1) {
    fwrite(STDERR, "usage: php idle-clients.php --port=P --n=N [--host=H] [--path=/p] [--batch=B] [--timeout=S] [--hold=S] [--release-file=F]\n");
    exit(2);
}
$batch = max(1, (int) $opt['batch']);
$deadline = microtime(true) + (float) $opt['timeout'];
$request = "GET {$opt['path']} HTTP/1.1\r\nHost: {$opt['host']}:{$port}\r\nUser-Agent: kiln-bench-idle\r\n\r\n";

/** @var array<int, resource> $socks */
$socks = [];
/** @var array<int, array{out: string, in: string}> $active connections still in their request/response */
$active = [];
$ok = [];
$failed = 0;
$statuses = [];
$errors = [];
$opened = 0;
$t0 = microtime(true);
$lastProgress = $t0;
$stall = (float) $opt['stall'];

/** Returns true once $buf holds one complete HTTP response (status line, headers, body). */
function response_complete(string $buf, ?int &$status): bool
{
    $end = strpos($buf, "\r\n\r\n");
    if ($end === false) {
        return false;
    }
    $head = substr($buf, 0, $end);
    $status = preg_match('#^HTTP/1\.[01] (\d{3})#', $head, $m) ? (int) $m[1] : 0;
    $body = substr($buf, $end + 4);
    if (preg_match('/\r\ntransfer-encoding:\s*chunked/i', $head)) {
        return str_ends_with($body, "0\r\n\r\n");
    }
    if (preg_match('/\r\ncontent-length:\s*(\d+)/i', $head, $m)) {
        return strlen($body) >= (int) $m[1];
    }

    return $status === 204 || $status === 304 || ($status >= 100 && $status < 200);
}

while (($opened < $n || $active) && microtime(true) < $deadline) {
    $progress = false;
    while ($opened < $n && count($active) < $batch) {
        $errno = 0;
        $errstr = '';
        $s = @stream_socket_client(
            "tcp://{$opt['host']}:{$port}",
            $errno,
            $errstr,
            5,
            STREAM_CLIENT_CONNECT | STREAM_CLIENT_ASYNC_CONNECT,
        );
        ++$opened;
        $progress = true;
        if ($s === false) {
            ++$failed;
            $key = 'connect: ' . ($errstr ?: "errno {$errno}");
            $errors[$key] = ($errors[$key] ?? 0) + 1;
            continue;
        }
        stream_set_blocking($s, false);
        $id = (int) $s;
        $socks[$id] = $s;
        $active[$id] = ['out' => $request, 'in' => ''];
    }
    foreach ($active as $id => &$c) {
        $s = $socks[$id];
        if ($c['out'] !== '') {
            $w = @fwrite($s, $c['out']);
            if ($w > 0) {
                $c['out'] = (string) substr($c['out'], $w);
                $progress = true;
            }
            if ($c['out'] !== '') {
                continue; // still connecting or the send buffer is full
            }
        }
        $chunk = @fread($s, 65536);
        if ($chunk !== false && $chunk !== '') {
            $c['in'] .= $chunk;
            $progress = true;
            $status = null;
            if (response_complete($c['in'], $status)) {
                $statuses[$status] = ($statuses[$status] ?? 0) + 1;
                if ($status === 200) {
                    $ok[$id] = true;
                } else {
                    ++$failed;
                    fclose($s);
                    unset($socks[$id]);
                }
                unset($active[$id]);
            }
        } elseif (feof($s)) {
            ++$failed;
            $key = $c['in'] === '' ? 'closed before responding' : 'closed mid-response';
            $errors[$key] = ($errors[$key] ?? 0) + 1;
            fclose($s);
            unset($socks[$id], $active[$id]);
            $progress = true;
        }
    }
    unset($c);
    if ($progress) {
        $lastProgress = microtime(true);
    } else {
        if (microtime(true) - $lastProgress > $stall) {
            $errors['stalled: no progress for ' . $opt['stall'] . ' s'] = 1;
            break;
        }
        usleep(1000);
    }
}
$pending = count($active) + ($n - $opened);
ksort($statuses);
echo json_encode(['phase' => 'established', 'n' => $n, 'ok' => count($ok), 'failed' => $failed,
    'pending' => $pending, 'statuses' => (object) $statuses, 'errors' => (object) $errors,
    'seconds' => round(microtime(true) - $t0, 3)]) . "\n";
fflush(STDOUT);

$holdUntil = microtime(true) + (float) $opt['hold'];
while (microtime(true) < $holdUntil && ($opt['release-file'] === '' || !file_exists($opt['release-file']))) {
    usleep(100_000);
}

// An idle keep-alive connection the server has not closed reads as "no data, not EOF".
$open = 0;
$closed = 0;
foreach (array_keys($ok) as $id) {
    $chunk = @fread($socks[$id], 1);
    if (($chunk === '' || $chunk === false) && feof($socks[$id])) {
        ++$closed;
    } else {
        ++$open;
    }
}
echo json_encode(['phase' => 'released', 'still_open' => $open, 'closed_by_server' => $closed]) . "\n";
exit(count($ok) === $n ? 0 : 1);
