<?php

declare(strict_types=1);

/*
 * A FastCGI responder that misbehaves on purpose, for tests. Run as a child process:
 *
 *   php FakeFastCgiServer.php SCENARIO EVENTS_FILE [unix:/path]
 *
 * It listens on a free 127.0.0.1 port (or the unix socket) and prints "ready PORT" (or "ready unix") on
 * stdout. Each connection is served by a forked child. A request's FAKE_SCENARIO param overrides SCENARIO
 * (every FAKE_* param may also come as HTTP_FAKE_*, i.e. a `Fake-*` request header through CgiParams):
 *
 *   echo          STDOUT: CGI headers + a JSON dump of the request (params, stdin size and md5, keep-conn)
 *   bytewise      echo, written one byte per write() (TCP_NODELAY), so records arrive split everywhere
 *   chunks        FAKE_CHUNKS records of FAKE_CHUNK_SIZE bytes of STDOUT (defaults 1000 x 100)
 *   close-after   echo, then close the connection even when FCGI_KEEP_CONN was asked for
 *   close-before  read the request, close without a byte of answer
 *   close-if-reused  close-before on a reused connection, echo on a new one
 *   close-mid     headers, 100 ms later part of the body, then close without END_REQUEST
 *   hang          read the request, never answer (until the client closes or aborts)
 *   stream        headers, then one STDOUT record every 50 ms until ABORT_REQUEST (then END_REQUEST)
 *   stderr        STDERR lines split across records, interleaved with STDOUT
 *   slow          answer like echo after FAKE_DELAY seconds
 *   overloaded    END_REQUEST with FCGI_OVERLOADED
 *   garbage       answer with bytes that are not FastCGI
 *   malformed-cgi STDOUT that is not a CGI response
 *   cgi           STDOUT is base64_decode(FAKE_OUTPUT) verbatim (a whole CGI response)
 *
 * Every event is appended to EVENTS_FILE as one line: "accept C", "request C N keep=0|1 stdin=LEN",
 * "abort C N", "eof C", "closed C", "stdout-done C N" (C: connection number, N: request number on it).
 */

use Kiln\Isolation\FastCgi\NameValuePairs;
use Kiln\Isolation\FastCgi\ProtocolStatus;
use Kiln\Isolation\FastCgi\Record;
use Kiln\Isolation\FastCgi\RecordDecoder;
use Kiln\Isolation\FastCgi\RecordEncoder;
use Kiln\Isolation\FastCgi\RecordType;

require __DIR__ . '/../../vendor/autoload.php';

[$defaultScenario, $events] = [$argv[1] ?? 'echo', $argv[2] ?? '/dev/null'];
$listen = $argv[3] ?? 'tcp://127.0.0.1:0';
if (str_starts_with($listen, 'unix:')) {
    @unlink(substr($listen, 5));
    $listen = 'unix://' . substr($listen, 5);
}
$server = stream_socket_server($listen, $errno, $error);
if ($server === false) {
    fwrite(STDOUT, "error $error\n");
    exit(1);
}
$name = (string) stream_socket_get_name($server, false);
fwrite(STDOUT, str_starts_with($listen, 'unix:') ? "ready unix\n" : 'ready ' . substr($name, (int) strrpos($name, ':') + 1) . "\n");

$log = static function (string $line) use ($events): void {
    $file = @fopen($events, 'r+'); // never creates it: a test that ended removed it
    if ($file !== false) {
        flock($file, LOCK_EX);
        fseek($file, 0, SEEK_END);
        fwrite($file, $line . "\n");
        fclose($file);
    }
};
pcntl_async_signals(true);
pcntl_signal(SIGCHLD, static function (): void {
    while (pcntl_waitpid(-1, $status, WNOHANG) > 0) {
    }
});
pcntl_signal(SIGTERM, static function (): never {
    exit(0);
});
$parent = (int) getmypid();
$number = 0;
while (true) {
    $client = @stream_socket_accept($server, 3600);
    if ($client === false) {
        continue;
    }
    $number++;
    $pid = pcntl_fork();
    if ($pid === 0) {
        fclose($server);
        pcntl_signal(SIGTERM, SIG_DFL);
        serve($client, $number, $defaultScenario, $log, $parent);
        exit(0);
    }
    fclose($client);
}

/** @param resource $client */
function serve(mixed $client, int $connection, string $defaultScenario, Closure $log, int $parent): void
{
    $log("accept $connection");
    if (function_exists('socket_import_stream') && ($socket = @socket_import_stream($client)) !== false) {
        @socket_set_option($socket, SOL_TCP, TCP_NODELAY, 1);
    }
    $decoder = new RecordDecoder();
    for ($n = 1; ; $n++) {
        $request = readRequest($client, $decoder, $connection, $n, $log, $parent);
        if ($request === null) {
            $log("eof $connection");
            return;
        }
        [$id, $keep, $params, $stdin] = $request;
        $log("request $connection $n keep=" . ($keep ? 1 : 0) . ' stdin=' . strlen($stdin) . ' method=' . ($params['REQUEST_METHOD'] ?? '-'));
        $scenario = fake($params, 'SCENARIO') ?? $defaultScenario;
        if ($scenario === 'close-if-reused') {
            $scenario = $n > 1 ? 'close-before' : 'echo';
        }
        $keepGoing = respond($scenario, $client, $decoder, $id, $params, $stdin, $keep, $connection, $n, $log, $parent);
        if (!$keepGoing || !$keep) {
            fclose($client);
            $log("closed $connection");
            return;
        }
    }
}

/**
 * @param resource $client
 * @return array{int, bool, array<string, string>, string}|null
 */
function readRequest(mixed $client, RecordDecoder $decoder, int $connection, int $n, Closure $log, int $parent): ?array
{
    [$id, $keep, $params, $stdin, $paramsDone] = [0, false, '', '', false];
    while (true) {
        $record = nextRecord($client, $decoder, $parent);
        if (!$record instanceof Record) {
            return null;
        }
        switch ($record->type()) {
            case RecordType::BeginRequest:
                $begin = $record->beginRequest();
                [$id, $keep] = [$begin->requestId, $begin->keepConnection()];
                break;
            case RecordType::Params:
                $record->isEndOfStream() ? $paramsDone = true : $params .= $record->content;
                break;
            case RecordType::Stdin:
                if ($record->isEndOfStream()) {
                    return [$id, $keep, NameValuePairs::decode($params), $stdin];
                }
                $stdin .= $record->content;
                break;
            case RecordType::AbortRequest:
                $log("abort $connection $n");
                break;
            case RecordType::GetValues:
                send($client, RecordEncoder::getValuesResult(['FCGI_MAX_CONNS' => '10', 'FCGI_MAX_REQS' => '10', 'FCGI_MPXS_CONNS' => '0']));
                break;
            default:
                send($client, RecordEncoder::unknownType($record->type));
        }
    }
}

/** @param resource $client */
function nextRecord(mixed $client, RecordDecoder $decoder, int $parent, ?float $timeout = null): Record|false|null
{
    $until = $timeout === null ? null : microtime(true) + $timeout;
    while (($record = $decoder->next()) === null) {
        $read = [$client];
        $none = null;
        $wait = $until === null ? 0.2 : max(0.0, min(0.2, $until - microtime(true)));
        $ready = @stream_select($read, $none, $none, 0, (int) ($wait * 1e6));
        if (posix_getppid() !== $parent) {
            exit(0); // the server was stopped
        }
        if ($ready === 0) {
            if ($until !== null && microtime(true) >= $until) {
                return false;
            }
            continue;
        }
        $bytes = @fread($client, 65536);
        if ($bytes === false || $bytes === '') {
            return null;
        }
        $decoder->feed($bytes);
    }
    return $record;
}

/**
 * @param resource $client
 * @param array<string, string> $params
 */
function respond(string $scenario, mixed $client, RecordDecoder $decoder, int $id, array $params, string $stdin, bool $keep, int $connection, int $n, Closure $log, int $parent): bool
{
    $end = RecordEncoder::endRequest($id, 0);
    $out = static fn(string $data): string => RecordEncoder::stream(RecordType::Stdout, $id, $data);
    $stdoutEnd = RecordEncoder::stream(RecordType::Stdout, $id, '', true);
    $echo = static function () use ($params, $stdin, $keep, $connection, $n): string {
        $json = json_encode(['params' => $params, 'stdin_length' => strlen($stdin), 'stdin_md5' => md5($stdin), 'keep' => $keep, 'connection' => $connection, 'request' => $n], JSON_THROW_ON_ERROR | JSON_UNESCAPED_SLASHES);
        return "Content-Type: application/json\r\nX-Connection: $connection\r\nX-Request: $n\r\n\r\n$json";
    };
    switch ($scenario) {
        case 'echo':
        case 'close-after':
            send($client, $out($echo()) . $stdoutEnd . $end);
            return $scenario === 'echo';
        case 'bytewise':
            $bytes = $out(substr($echo(), 0, 40)) . $out(substr($echo(), 40)) . $stdoutEnd . $end;
            foreach (str_split($bytes) as $byte) {
                send($client, $byte);
            }
            return true;
        case 'chunks':
            $count = (int) (fake($params, 'CHUNKS') ?? 1000);
            $size = (int) (fake($params, 'CHUNK_SIZE') ?? 100);
            send($client, $out("Content-Type: text/plain\r\n\r\n"));
            for ($i = 0; $i < $count; $i++) {
                if (!send($client, $out(str_pad("chunk $i ", $size, '.')))) {
                    return false;
                }
            }
            $log("stdout-done $connection $n");
            send($client, $stdoutEnd . $end);
            return true;
        case 'close-before':
            return false;
        case 'close-mid':
            send($client, $out("Content-Type: text/plain\r\n\r\n"));
            usleep(100_000); // the head is forwarded before the body breaks off
            send($client, $out('partial body'));
            return false;
        case 'hang':
        case 'stream':
            if ($scenario === 'stream') {
                send($client, $out("Content-Type: text/event-stream\r\n\r\n"));
            }
            for ($i = 0; ; $i++) {
                $record = nextRecord($client, $decoder, $parent, 0.05);
                if ($record === null) {
                    $log("eof $connection");
                    return false;
                }
                if ($record !== false && $record->is(RecordType::AbortRequest)) {
                    $log("abort $connection $n");
                    send($client, RecordEncoder::endRequest($id, 1));
                    return true;
                }
                if ($scenario === 'stream' && !send($client, $out("data: $i\n\n"))) {
                    return false;
                }
            }
            // no break: the loop only returns
        case 'stderr':
            send($client, RecordEncoder::stream(RecordType::Stderr, $id, "PHP Warning:  first line\nsecond ")
                . $out("Content-Type: text/plain\r\n\r\nbody")
                . RecordEncoder::stream(RecordType::Stderr, $id, "line\r\nno newline at the end")
                . $out(' more') . RecordEncoder::stream(RecordType::Stderr, $id, '', true) . $stdoutEnd . $end);
            return true;
        case 'slow':
            usleep((int) ((float) (fake($params, 'DELAY') ?? 1) * 1e6));
            send($client, $out($echo()) . $stdoutEnd . $end);
            return true;
        case 'overloaded':
            send($client, RecordEncoder::endRequest($id, 0, ProtocolStatus::Overloaded));
            return true;
        case 'garbage':
            send($client, "HTTP/1.1 200 OK\r\n\r\n");
            return false;
        case 'malformed-cgi':
            send($client, $out("this is not a header\r\n\r\nbody") . $stdoutEnd . $end);
            return true;
        case 'cgi':
            send($client, RecordEncoder::stream(RecordType::Stdout, $id, base64_decode(fake($params, 'OUTPUT') ?? ''), true) . $end);
            return true;
        default:
            send($client, RecordEncoder::stream(RecordType::Stderr, $id, "unknown scenario $scenario", true) . $end);
            return true;
    }
}

/** @param array<string, string> $params */
function fake(array $params, string $name): ?string
{
    return $params["FAKE_$name"] ?? $params["HTTP_FAKE_$name"] ?? null;
}

/** @param resource $client */
function send(mixed $client, string $bytes): bool
{
    while ($bytes !== '') {
        $n = @fwrite($client, $bytes);
        if ($n === false || $n === 0) {
            return false;
        }
        $bytes = substr($bytes, $n);
    }
    return true;
}
