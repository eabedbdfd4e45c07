<?php

declare(strict_types=1);

namespace Kiln\Tests\Support;

/**
 * A WebSocket client that writes exactly the frames a test builds (unmasked, invalid, too large) on a real
 * socket, and reads the server's frames with a deadline on every read. It reads only when asked, so it can
 * also play a client that stops reading.
 */
final class RawWebSocket
{
    /** @var resource */
    private $socket;

    private string $buffer = '';

    private bool $eof = false;

    /** @var array<string, string> lower-cased name => value */
    public readonly array $handshakeHeaders;

    /**
     * @param array<string, string> $headers added to the handshake request
     * @throws \RuntimeException when the server does not answer 101
     */
    public function __construct(KilnProcess $server, string $path, array $headers = [])
    {
        $this->socket = ClientSocket::connect($server->host(), $server->port(), 5.0);
        $request = "GET $path HTTP/1.1\r\nHost: {$server->host()}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            . 'Sec-WebSocket-Key: ' . base64_encode(random_bytes(16)) . "\r\nSec-WebSocket-Version: 13\r\n";
        foreach ($headers as $name => $value) {
            $request .= "$name: $value\r\n";
        }
        $this->send($request . "\r\n");
        $deadline = microtime(true) + 5.0;
        while (($end = strpos($this->buffer, "\r\n\r\n")) === false) {
            if (!$this->fill($deadline)) {
                throw new \RuntimeException('no handshake response; got: ' . $this->buffer);
            }
        }
        $head = substr($this->buffer, 0, $end);
        $this->buffer = substr($this->buffer, $end + 4);
        if (!str_starts_with($head, 'HTTP/1.1 101 ')) {
            throw new \RuntimeException("handshake refused: $head");
        }
        $parsed = [];
        foreach (\array_slice(explode("\r\n", $head), 1) as $line) {
            [$name, $value] = explode(':', $line, 2) + [1 => ''];
            $parsed[strtolower($name)] = trim($value);
        }
        $this->handshakeHeaders = $parsed;
    }

    /** One frame as a client would send it (masked unless told otherwise). */
    public static function frame(int $opcode, string $payload, bool $fin = true, bool $masked = true, int $rsv = 0): string
    {
        $length = \strlen($payload);
        $bytes = \chr(($fin ? 0x80 : 0) | ($rsv << 4) | $opcode);
        $maskBit = $masked ? 0x80 : 0;
        if ($length < 126) {
            $bytes .= \chr($maskBit | $length);
        } elseif ($length < 65536) {
            $bytes .= \chr($maskBit | 126) . pack('n', $length);
        } else {
            $bytes .= \chr($maskBit | 127) . pack('J', $length);
        }
        if (!$masked) {
            return $bytes . $payload;
        }
        $mask = random_bytes(4);
        return $bytes . $mask . ($payload ^ str_repeat($mask, intdiv($length, 4) + 1));
    }

    public function send(string $bytes): void
    {
        ClientSocket::write($this->socket, $bytes, 5.0);
    }

    /**
     * The next frame from the server (fragments are not joined), or null when the connection ended first.
     *
     * @return array{opcode: int, fin: bool, payload: string}|null
     */
    public function readFrame(float $timeout = 5.0): ?array
    {
        $deadline = microtime(true) + $timeout;
        while (true) {
            $frame = $this->parse();
            if ($frame !== null) {
                return $frame;
            }
            if (!$this->fill($deadline)) {
                if ($this->eof) {
                    return null;
                }
                throw new \RuntimeException("no frame within {$timeout}s");
            }
        }
    }

    /**
     * Reads frames until the server's close frame: its code (1005 without one) and reason, and the data
     * frames read before it. Null as the code when the connection ended without a close frame.
     *
     * @return array{?int, string, list<string>}
     */
    public function readUntilClose(float $timeout = 5.0): array
    {
        $deadline = microtime(true) + $timeout;
        $data = [];
        while (($frame = $this->readFrame(max(0.01, $deadline - microtime(true)))) !== null) {
            if ($frame['opcode'] === 0x8) {
                $code = \strlen($frame['payload']) >= 2 ? self::number(substr($frame['payload'], 0, 2)) : 1005;
                return [$code, (string) substr($frame['payload'], 2), $data];
            }
            $data[] = $frame['payload'];
        }
        return [null, '', $data];
    }

    /** Whether the server closed the TCP connection within $timeout (what arrives meanwhile is discarded). */
    public function isClosedWithin(float $timeout): bool
    {
        $deadline = microtime(true) + $timeout;
        while (!$this->eof) {
            $this->buffer = '';
            if (!$this->fill($deadline) && microtime(true) >= $deadline) {
                return $this->eof;
            }
        }
        return true;
    }

    public function close(): void
    {
        if (\is_resource($this->socket)) {
            fclose($this->socket);
        }
    }

    public function __destruct()
    {
        $this->close();
    }

    /** @return array{opcode: int, fin: bool, payload: string}|null */
    private function parse(): ?array
    {
        if (\strlen($this->buffer) < 2) {
            return null;
        }
        $first = \ord($this->buffer[0]);
        $length = \ord($this->buffer[1]) & 0x7f;
        $offset = 2;
        if ($length === 126) {
            if (\strlen($this->buffer) < 4) {
                return null;
            }
            $length = self::number(substr($this->buffer, 2, 2));
            $offset = 4;
        } elseif ($length === 127) {
            if (\strlen($this->buffer) < 10) {
                return null;
            }
            $length = self::number(substr($this->buffer, 2, 8));
            $offset = 10;
        }
        if (\strlen($this->buffer) < $offset + $length) {
            return null;
        }
        $payload = substr($this->buffer, $offset, $length);
        $this->buffer = substr($this->buffer, $offset + $length);
        return ['opcode' => $first & 0x0f, 'fin' => ($first & 0x80) !== 0, 'payload' => $payload];
    }

    /** A big-endian unsigned number. */
    private static function number(string $bytes): int
    {
        $value = 0;
        foreach (str_split($bytes) as $byte) {
            $value = ($value << 8) | \ord($byte);
        }
        return $value;
    }

    /** Reads what is there before $deadline; false when nothing came (timeout or end of stream). */
    private function fill(float $deadline): bool
    {
        while (!$this->eof) {
            $left = $deadline - microtime(true);
            if ($left <= 0) {
                return false;
            }
            $r = [$this->socket];
            $w = $e = null;
            if (@stream_select($r, $w, $e, 0, (int) min(200_000, $left * 1e6)) < 1) {
                continue;
            }
            $data = @fread($this->socket, 65536);
            if ($data === false || ($data === '' && feof($this->socket))) {
                $this->eof = true;
                return false;
            }
            if ($data !== '') {
                $this->buffer .= $data;
                return true;
            }
        }
        return false;
    }
}
