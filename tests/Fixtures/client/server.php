<?php

declare(strict_types=1);

/*
 * Select-based HTTP/1.1 test server for the client's integration tests. Misbehaves on purpose.
 * Usage: php server.php [--tls=/path/cert-and-key.pem]. Prints its port on stdout, then serves until killed.
 *
 * Every response carries X-Conn-Id (this connection's number) and X-Accepted (connections so far).
 * Paths: /hello, /bytewise (1-byte writes), /chunked (extensions + trailers, split writes), /never,
 * /close (answers keep-alive, then closes), /drop (closes without answering), /slow (chunked, 5 pieces 150 ms apart), /wait?ms=N,
 * /echo (method, target, headers, body as JSON), /redirect?to=URL&status=N, /interim (100 + 103 first),
 * /loop (redirects to itself), /big?n=N, /nocontent (204).
 */

$tls = null;
foreach (array_slice($argv, 1) as $arg) {
    if (str_starts_with($arg, '--tls=')) {
        $tls = substr($arg, 6);
    }
}
$context = stream_context_create($tls === null ? [] : ['ssl' => ['local_cert' => $tls, 'verify_peer' => false]]);
$server = stream_socket_server(($tls === null ? 'tcp' : 'ssl') . '://127.0.0.1:0', $errno, $errstr, STREAM_SERVER_BIND | STREAM_SERVER_LISTEN, $context);
if ($server === false) {
    fwrite(STDERR, "listen failed: {$errstr}\n");
    exit(1);
}
$name = (string) stream_socket_get_name($server, false);
echo substr($name, strrpos($name, ':') + 1), "\n";

/** @var array<int, array{stream: resource, in: string, out: list<array{0: float, 1: ?string}>}> $conns */
$conns = [];
$accepted = 0;

function parseRequest(string &$buffer): ?array
{
    $end = strpos($buffer, "\r\n\r\n");
    if ($end === false) {
        return null;
    }
    $lines = explode("\r\n", substr($buffer, 0, $end));
    [$method, $target] = explode(' ', (string) array_shift($lines));
    $headers = [];
    foreach ($lines as $line) {
        [$n, $v] = explode(':', $line, 2);
        $headers[strtolower($n)] = trim($v);
    }
    $rest = substr($buffer, $end + 4);
    $body = '';
    if (($headers['transfer-encoding'] ?? '') === 'chunked') {
        $pos = 0;
        while (true) {
            $lineEnd = strpos($rest, "\r\n", $pos);
            if ($lineEnd === false) {
                return null;
            }
            $size = hexdec(substr($rest, $pos, $lineEnd - $pos));
            if ($size === 0) {
                if (strpos($rest, "\r\n", $lineEnd + 2) === false) {
                    return null;
                }
                $pos = $lineEnd + 4;
                break;
            }
            if (strlen($rest) < $lineEnd + 2 + $size + 2) {
                return null;
            }
            $body .= substr($rest, $lineEnd + 2, (int) $size);
            $pos = $lineEnd + 2 + (int) $size + 2;
        }
        $buffer = substr($rest, $pos);
    } else {
        $length = (int) ($headers['content-length'] ?? 0);
        if (strlen($rest) < $length) {
            return null;
        }
        $body = substr($rest, 0, $length);
        $buffer = substr($rest, $length);
    }

    return [$method, $target, $headers, $body];
}

/** @return list<array{0: float, 1: ?string}> delays (seconds after the previous) and bytes; null bytes = close */
function respond(string $method, string $target, array $headers, string $body, int $id, int $accepted): array
{
    $path = (string) parse_url($target, PHP_URL_PATH);
    parse_str((string) parse_url($target, PHP_URL_QUERY), $query);
    $info = "X-Conn-Id: {$id}\r\nX-Accepted: {$accepted}\r\n";
    $simple = static fn(string $content, string $status = '200 OK', string $extra = ''): string => "HTTP/1.1 {$status}\r\n{$info}{$extra}Content-Length: " . strlen($content) . "\r\n\r\n" . ($method === 'HEAD' ? '' : $content);
    switch ($path) {
        case '/never':
            return [];
        case '/bytewise':
            return array_map(static fn(string $b): array => [0.002, $b], str_split($simple('byte by byte!', '200 OK', "X-Test: bytes\r\n")));
        case '/chunked':
            return [
                [0, "HTTP/1.1 200 OK\r\n{$info}Transfer-Encoding: chunked\r\nTrailer: X-Checksum\r\n\r\n5;ext=1\r\nhel"],
                [0.01, "lo\r\n1;flag\r\n \r\n5\r"],
                [0.01, "\nworld\r\n0;end=yes\r\nX-Checksum: 42\r\n\r\n"],
            ];
        case '/drop':
            return [[0, null]];
        case '/close':
            return [[0, $simple('bye')], [0.05, null]];
        case '/slow':
            $out = [[0, "HTTP/1.1 200 OK\r\n{$info}Transfer-Encoding: chunked\r\n\r\n"]];
            for ($i = 1; $i <= 5; $i++) {
                $out[] = [$i === 1 ? 0 : 0.15, sprintf("%x\r\npiece%d\n\r\n", 7, $i)];
            }
            $out[] = [0, "0\r\n\r\n"];

            return $out;
        case '/wait':
            return [[((int) ($query['ms'] ?? 500)) / 1000, $simple('waited')]];
        case '/echo':
            return [[0, $simple(json_encode(['method' => $method, 'target' => $target, 'headers' => $headers, 'body' => $body], JSON_THROW_ON_ERROR))]];
        case '/redirect':
            $status = (int) ($query['status'] ?? 302);

            return [[0, $simple('moved', "{$status} Moved", 'Location: ' . ($query['to'] ?? '/hello') . "\r\n")]];
        case '/loop':
            return [[0, $simple('again', '302 Found', "Location: /loop\r\n")]];
        case '/interim':
            return [[0, "HTTP/1.1 100 Continue\r\n\r\n"], [0.01, "HTTP/1.1 103 Early Hints\r\nLink: </a.css>\r\n\r\n"], [0.01, $simple('final')]];
        case '/big':
            return [[0, $simple(str_repeat('x', (int) ($query['n'] ?? 1000)))]];
        case '/nocontent':
            return [[0, "HTTP/1.1 204 No Content\r\n{$info}\r\n"]];
        default:
            return [[0, $simple('hello')]];
    }
}

while (true) {
    $now = microtime(true);
    $read = [$server];
    $write = [];
    $wait = 0.5;
    foreach ($conns as $conn) {
        $read[] = $conn['stream'];
        if ($conn['out'] !== []) {
            $wait = min($wait, max(0, $conn['out'][0][0] - $now));
        }
    }
    $except = null;
    @stream_select($read, $write, $except, 0, (int) ($wait * 1e6));
    foreach ($read as $stream) {
        if ($stream === $server) {
            $client = @stream_socket_accept($server, 5);
            if ($client !== false) {
                stream_set_blocking($client, false);
                $conns[++$accepted] = ['stream' => $client, 'in' => '', 'out' => []];
            }
            continue;
        }
        $id = array_search($stream, array_map(static fn(array $c) => $c['stream'], $conns), true);
        $bytes = fread($stream, 65536);
        if ($bytes === false || ($bytes === '' && feof($stream))) {
            fclose($stream);
            unset($conns[$id]);
            continue;
        }
        $conns[$id]['in'] .= $bytes;
        while (($request = parseRequest($conns[$id]['in'])) !== null) {
            $at = max(microtime(true), $conns[$id]['out'] === [] ? 0 : $conns[$id]['out'][array_key_last($conns[$id]['out'])][0]);
            foreach (respond(...$request, id: $id, accepted: $accepted) as [$delay, $chunk]) {
                $at += $delay;
                $conns[$id]['out'][] = [$at, $chunk];
            }
        }
    }
    $now = microtime(true);
    foreach ($conns as $id => $conn) {
        while ($conns[$id]['out'] !== [] && $conns[$id]['out'][0][0] <= $now) {
            [, $chunk] = array_shift($conns[$id]['out']);
            if ($chunk === null) {
                fclose($conn['stream']);
                unset($conns[$id]);
                break;
            }
            stream_set_blocking($conn['stream'], true);
            fwrite($conn['stream'], $chunk);
            fflush($conn['stream']);
            stream_set_blocking($conn['stream'], false);
        }
    }
}
