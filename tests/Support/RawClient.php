<?php

declare(strict_types=1);

namespace Kiln\Tests\Support;

/**
 * A raw HTTP/1.1 test client on a real socket: sends exact bytes, reads responses one at a time,
 * and tells whether the server closed the connection. Every read has a deadline.
 */
final class RawClient
{
    /** @var resource */
    private $socket;

    private string $buffer = '';

    private bool $eof = false;

    public function __construct(string $host, int $port, float $timeout = 5.0)
    {
        $this->socket = ClientSocket::connect($host, $port, $timeout);
    }

    public static function to(KilnProcess $server): self
    {
        return new self($server->host(), $server->port());
    }

    public function send(string $bytes): void
    {
        ClientSocket::write($this->socket, $bytes, 5.0);
    }

    /** Best-effort send that ignores a connection the server already closed. */
    public function trySend(string $bytes): bool
    {
        try {
            $this->send($bytes);
            return true;
        } catch (\RuntimeException) {
            return false;
        }
    }

    /**
     * Reads one complete response, or null if the server closed without sending one.
     *
     * @return array{status: int, reason: string, headers: array<string, list<string>>, body: string, raw: string}|null
     */
    public function readResponse(float $timeout = 5.0, bool $headRequest = false): ?array
    {
        $deadline = microtime(true) + $timeout;
        while (true) {
            $parsed = self::parse($this->buffer, $headRequest, $this->eof);
            if ($parsed !== null) {
                [$response, $used] = $parsed;
                $this->buffer = substr($this->buffer, $used);
                return $response;
            }
            if ($this->eof) {
                if ($this->buffer !== '') {
                    throw new \RuntimeException('connection closed mid-response: ' . substr($this->buffer, 0, 200));
                }
                return null;
            }
            $this->fill($deadline);
        }
    }

    /** Waits until the server closes the connection; returns whatever bytes arrived meanwhile. */
    public function readUntilClosed(float $timeout = 5.0): string
    {
        $deadline = microtime(true) + $timeout;
        while (!$this->eof) {
            $this->fill($deadline);
        }
        $rest = $this->buffer;
        $this->buffer = '';
        return $rest;
    }

    /** True when the server closes within $timeout. */
    public function isClosedWithin(float $timeout): bool
    {
        try {
            $this->readUntilClosed($timeout);
            return true;
        } catch (\RuntimeException) {
            return false;
        }
    }

    public function close(): void
    {
        if (\is_resource($this->socket)) {
            fclose($this->socket);
        }
    }

    /** @return resource */
    public function socket()
    {
        return $this->socket;
    }

    private function fill(float $deadline): void
    {
        $left = $deadline - microtime(true);
        if ($left <= 0) {
            throw new \RuntimeException('timed out waiting for the server; got: ' . substr($this->buffer, 0, 300));
        }
        $r = [$this->socket];
        $w = null;
        $e = null;
        $ready = @stream_select($r, $w, $e, (int) $left, (int) (fmod($left, 1.0) * 1e6));
        if ($ready === 0 || $ready === false) {
            return;
        }
        $data = @fread($this->socket, 1 << 20);
        if ($data === false || ($data === '' && feof($this->socket))) {
            $this->eof = true;
            return;
        }
        $this->buffer .= $data;
    }

    /**
     * @return array{0: array{status: int, reason: string, headers: array<string, list<string>>, body: string, raw: string}, 1: int}|null
     */
    public static function parse(string $buffer, bool $headRequest = false, bool $eof = false): ?array
    {
        $end = strpos($buffer, "\r\n\r\n");
        if ($end === false) {
            return null;
        }
        $lines = explode("\r\n", substr($buffer, 0, $end));
        if (preg_match('~^HTTP/1\.[01] (\d{3}) ?(.*)$~', (string) array_shift($lines), $m) !== 1) {
            throw new \RuntimeException('bad status line in: ' . substr($buffer, 0, 200));
        }
        $headers = [];
        foreach ($lines as $line) {
            [$name, $value] = explode(':', $line, 2) + [1 => ''];
            $headers[strtolower($name)][] = trim($value);
        }
        $status = (int) $m[1];
        $offset = $end + 4;
        $noBody = $headRequest || $status < 200 || $status === 204 || $status === 304;
        if ($noBody) {
            $body = '';
        } elseif (isset($headers['transfer-encoding'])) {
            $body = '';
            while (true) {
                $lineEnd = strpos($buffer, "\r\n", $offset);
                if ($lineEnd === false) {
                    return null;
                }
                $size = hexdec(explode(';', substr($buffer, $offset, $lineEnd - $offset))[0]);
                if ($size === 0) {
                    $trailerEnd = strpos($buffer, "\r\n\r\n", $lineEnd);
                    if ($trailerEnd === false) {
                        if (substr($buffer, $lineEnd, 4) === "\r\n\r\n") {
                            $trailerEnd = $lineEnd;
                        } else {
                            return null;
                        }
                    }
                    $offset = $trailerEnd + 4;
                    break;
                }
                if (\strlen($buffer) < $lineEnd + 2 + $size + 2) {
                    return null;
                }
                $body .= substr($buffer, $lineEnd + 2, (int) $size);
                $offset = $lineEnd + 2 + (int) $size + 2;
            }
        } elseif (isset($headers['content-length'])) {
            $length = (int) $headers['content-length'][0];
            if (\strlen($buffer) < $offset + $length) {
                return null;
            }
            $body = substr($buffer, $offset, $length);
            $offset += $length;
        } else {
            if (!$eof) {
                return null;
            }
            $body = substr($buffer, $offset);
            $offset = \strlen($buffer);
        }
        $response = ['status' => $status, 'reason' => $m[2], 'headers' => $headers, 'body' => $body, 'raw' => substr($buffer, 0, $offset)];
        return [$response, $offset];
    }
}
