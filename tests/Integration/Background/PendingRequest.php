<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Background;

/** A GET sent now and read later (Connection: close), so a test can do other things while it runs. */
final class PendingRequest
{
    /** @param resource $socket */
    private function __construct(private readonly mixed $socket, public readonly float $sentAt) {}

    public static function send(string $host, int $port, string $path): self
    {
        $socket = @stream_socket_client("tcp://$host:$port", $errno, $error, 5.0);
        if ($socket === false) {
            throw new \RuntimeException("cannot connect to $host:$port: $error");
        }
        fwrite($socket, "GET $path HTTP/1.1\r\nHost: $host\r\nConnection: close\r\n\r\n");
        return new self($socket, microtime(true));
    }

    /** Whether the server answered already (something to read, or closed). */
    public function answered(): bool
    {
        $read = [$this->socket];
        $write = $except = null;
        return stream_select($read, $write, $except, 0) > 0;
    }

    /** @return array{status: int, headers: string, body: string} */
    public function receive(float $timeout = 30.0): array
    {
        stream_set_timeout($this->socket, (int) ceil($timeout));
        $raw = (string) stream_get_contents($this->socket);
        fclose($this->socket);
        [$head, $body] = explode("\r\n\r\n", $raw, 2) + ['', ''];
        if (preg_match('~^HTTP/1\.1 (\d{3})~', $head, $m) !== 1) {
            throw new \RuntimeException("no HTTP response within {$timeout}s: '$raw'");
        }
        if (stripos($head, "transfer-encoding: chunked") !== false) {
            $decoded = '';
            while (preg_match('/^([0-9a-f]+)\r\n/i', $body, $c) === 1 && ($size = (int) hexdec($c[1])) > 0) {
                $decoded .= substr($body, \strlen($c[0]), $size);
                $body = substr($body, \strlen($c[0]) + $size + 2);
            }
            $body = $decoded;
        }
        return ['status' => (int) $m[1], 'headers' => $head, 'body' => $body];
    }
}
