<?php

declare(strict_types=1);

namespace Kiln\Tests\Support;

/**
 * A raw-socket event-stream client for tests: sends an HTTP/1.0 GET (so the body is the event stream as
 * is, up to the close), reads the head, then feeds what arrives to an SseParser. Every wait is bounded.
 */
final class SseClient
{
    /** @var resource */
    private mixed $socket;

    private string $buffer = '';

    public readonly SseParser $parser;

    /** @var array<string, string> lower-cased names */
    public array $headers = [];

    public int $status = 0;

    /** The pid the fixture app announces in its first comment (0 when it does not). */
    public int $workerPid = 0;

    /** @param array<string, string> $headers */
    public function __construct(string $host, int $port, string $path, array $headers = [], float $timeout = 5.0)
    {
        $socket = @stream_socket_client("tcp://$host:$port", $errno, $error, $timeout);
        if ($socket === false) {
            throw new \RuntimeException("cannot connect: $error");
        }
        $this->socket = $socket;
        $this->parser = new SseParser();
        $request = "GET $path HTTP/1.0\r\nHost: $host\r\nAccept: text/event-stream\r\n";
        foreach ($headers as $name => $value) {
            $request .= "$name: $value\r\n";
        }
        fwrite($socket, $request . "\r\n");
        stream_set_blocking($socket, false);
        $deadline = microtime(true) + $timeout;
        while (($end = strpos($this->buffer, "\r\n\r\n")) === false) {
            if (!$this->read($deadline)) {
                throw new \RuntimeException('no response head; got: ' . $this->buffer);
            }
        }
        $lines = explode("\r\n", substr($this->buffer, 0, $end));
        $this->status = (int) explode(' ', (string) array_shift($lines))[1];
        foreach ($lines as $line) {
            [$name, $value] = explode(':', $line, 2) + [1 => ''];
            $this->headers[strtolower($name)] = trim($value);
        }
        $body = substr($this->buffer, $end + 4);
        $this->buffer = '';
        $this->parser->feed($body);
    }

    /**
     * Reads until $done(parser) holds; false if the time ran out or the server closed first.
     *
     * @param \Closure(SseParser): bool $done
     */
    public function waitFor(\Closure $done, float $timeout = 5.0): bool
    {
        $deadline = microtime(true) + $timeout;
        while (!$done($this->parser)) {
            if (!$this->read($deadline)) {
                return $done($this->parser);
            }
        }
        return true;
    }

    /** Reads the comment naming the worker (the fixture app sends it first). */
    public function readWorkerPid(float $timeout = 5.0): int
    {
        $this->waitFor(static fn(SseParser $p): bool => $p->comments() !== [], $timeout);
        foreach ($this->parser->comments() as $comment) {
            if (preg_match('/^worker (\d+)$/D', $comment, $m) === 1) {
                return $this->workerPid = (int) $m[1];
            }
        }
        return 0;
    }

    /** Whether the server closed the connection within $timeout. */
    public function waitForClose(float $timeout = 5.0): bool
    {
        $deadline = microtime(true) + $timeout;
        while ($this->read($deadline)) {
            // reading until the end
        }
        return feof($this->socket);
    }

    public function close(): void
    {
        if (\is_resource($this->socket)) {
            fclose($this->socket);
        }
    }

    private function read(float $deadline): bool
    {
        while (true) {
            if (feof($this->socket)) {
                return false;
            }
            $wait = $deadline - microtime(true);
            if ($wait <= 0) {
                return false;
            }
            $read = [$this->socket];
            $write = $except = null;
            if (@stream_select($read, $write, $except, (int) $wait, (int) (fmod($wait, 1.0) * 1e6)) === false) {
                return false;
            }
            $data = @fread($this->socket, 65536);
            if ($data === false) {
                return false;
            }
            if ($data !== '') {
                if ($this->status === 0) {
                    $this->buffer .= $data;
                } else {
                    $this->parser->feed($data);
                }
                return true;
            }
        }
    }

    /** @return array{int, string} status and body of a POST (Connection: close) */
    public static function post(string $host, int $port, string $path, string $body, float $timeout = 5.0): array
    {
        $socket = @stream_socket_client("tcp://$host:$port", $errno, $error, $timeout);
        if ($socket === false) {
            throw new \RuntimeException("cannot connect: $error");
        }
        stream_set_timeout($socket, (int) ceil($timeout));
        fwrite($socket, "POST $path HTTP/1.1\r\nHost: $host\r\nContent-Length: " . \strlen($body)
            . "\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n" . $body);
        $response = (string) stream_get_contents($socket);
        fclose($socket);
        $parsed = HttpClient::parse($response);
        return [$parsed['status'], $parsed['body']];
    }
}
