<?php

declare(strict_types=1);

namespace Kiln\Tests\Support;

use PHPUnit\Framework\Assert;

/**
 * A client connection that reads responses strictly, as a picky HTTP/1.1 client or proxy would: the status
 * line and every header line must follow RFC 9112's grammar (no obs-fold, no bare LF), the framing fields
 * appear once each and never together, a Date is there (an IMF-fixdate), the body is exactly Content-Length bytes, and a response that says
 * `Connection: close` is followed by the end of the connection and nothing else. Every wait has a deadline.
 */
final class StrictHttp
{
    /** Fields a response may carry once at most (RFC 9110 §5.3: no list syntax, or framing). */
    private const SINGLE = ['content-length', 'transfer-encoding', 'connection', 'content-type', 'date', 'server', 'retry-after', 'location'];

    /** @var resource */
    private mixed $socket;

    private string $buffer = '';

    public function __construct(string $host, int $port)
    {
        $this->socket = ClientSocket::connect($host, $port, 10.0);
    }

    public static function to(KilnProcess $server): self
    {
        return new self($server->host(), $server->port());
    }

    public function send(string $bytes): void
    {
        ClientSocket::write($this->socket, $bytes, 10.0);
    }

    /**
     * One whole response, checked as it is read.
     *
     * @return array{status: int, headers: array<string, list<string>>, body: string, close: bool}
     */
    public function read(float $timeout = 10.0, bool $headRequest = false): array
    {
        $deadline = microtime(true) + $timeout;
        while (($end = strpos($this->buffer, "\r\n\r\n")) === false) {
            Assert::assertTrue($this->fill($deadline), 'the connection ended or timed out before a whole response head; got: ' . json_encode($this->buffer));
        }
        $head = substr($this->buffer, 0, $end);
        $this->buffer = substr($this->buffer, $end + 4);
        $lines = explode("\r\n", $head);
        $statusLine = array_shift($lines);
        Assert::assertMatchesRegularExpression('~^HTTP/1\.1 [1-5][0-9]{2} [\t \x21-\x7e\x80-\xff]+$~', $statusLine, 'status line');
        $status = (int) substr($statusLine, 9, 3);
        $headers = [];
        foreach ($lines as $line) {
            Assert::assertStringNotContainsString("\n", $line, 'a bare LF in the head');
            Assert::assertStringNotContainsString("\0", $line, 'a NUL in the head');
            Assert::assertMatchesRegularExpression(
                '~^[!#$%&\'*+.^_`|\~0-9A-Za-z-]+:[ \t]*(?:[\x21-\x7e\x80-\xff](?:[\t \x21-\x7e\x80-\xff]*[\x21-\x7e\x80-\xff])?)?[ \t]*$~',
                $line,
                'header line (token, colon, value without controls; no obs-fold)',
            );
            [$name, $value] = explode(':', $line, 2);
            $headers[strtolower($name)][] = trim($value, " \t");
        }
        foreach (self::SINGLE as $name) {
            Assert::assertLessThanOrEqual(1, \count($headers[$name] ?? []), "$name appears more than once");
        }
        Assert::assertFalse(isset($headers['content-length'], $headers['transfer-encoding']), 'both Content-Length and Transfer-Encoding');
        // RFC 9110 §6.6.1 lets a 5xx go without one, but every other response of the server has it: so must its errors.
        Assert::assertArrayHasKey('date', $headers, "a response without Date ($status)");
        Assert::assertMatchesRegularExpression('~^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{2} (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4} \d{2}:\d{2}:\d{2} GMT$~', $headers['date'][0], 'Date is an IMF-fixdate');
        $close = isset($headers['connection']) && \in_array('close', array_map('trim', explode(',', strtolower($headers['connection'][0]))), true);
        $body = '';
        if (!$headRequest && $status >= 200 && $status !== 204 && $status !== 304) {
            Assert::assertArrayHasKey('content-length', $headers, 'an error response is framed by Content-Length');
            Assert::assertMatchesRegularExpression('~^[0-9]+$~', $headers['content-length'][0], 'Content-Length value');
            $length = (int) $headers['content-length'][0];
            while (\strlen($this->buffer) < $length) {
                Assert::assertTrue($this->fill($deadline), "the body ended after " . \strlen($this->buffer) . " of the $length bytes Content-Length announced");
            }
            $body = substr($this->buffer, 0, $length);
            $this->buffer = substr($this->buffer, $length);
        }
        if ($close) {
            // Nothing may follow a response that ends the connection: a byte more is a framing error.
            while ($this->fill($deadline)) {
            }
            Assert::assertSame('', $this->buffer, 'bytes after the body of a response that closes the connection (Content-Length too short?)');
            Assert::assertTrue(feof($this->socket), 'the server did not close after Connection: close');
        }

        return ['status' => $status, 'headers' => $headers, 'body' => $body, 'close' => $close];
    }

    public function close(): void
    {
        if (\is_resource($this->socket)) {
            fclose($this->socket);
        }
    }

    /** Reads what is there; false at the end of the connection or the deadline. */
    private function fill(float $deadline): bool
    {
        while (true) {
            $data = @fread($this->socket, 65536);
            if (\is_string($data) && $data !== '') {
                $this->buffer .= $data;
                return true;
            }
            if (feof($this->socket) || !$this->wait(true, $deadline)) {
                return false;
            }
        }
    }

    private function wait(bool $read, float $deadline): bool
    {
        $left = $deadline - microtime(true);
        if ($left <= 0) {
            return false;
        }
        $r = $read ? [$this->socket] : null;
        $w = $read ? null : [$this->socket];
        $e = null;
        @stream_select($r, $w, $e, (int) $left, (int) (fmod($left, 1.0) * 1e6));

        return true;
    }
}
