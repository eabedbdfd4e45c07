<?php

declare(strict_types=1);

namespace Kiln\Isolation\Fork;

/**
 * Sans-I/O parser of one SCGI request (see Scgi): feed() bytes as they come; it returns the params once,
 * when the header netstring is complete; body() hands out the body bytes received so far (never more than
 * CONTENT_LENGTH); isComplete() once all of them came. Bytes after the body are refused. Any malformation
 * throws ScgiException; after one, the parser keeps throwing it.
 */
final class ScgiRequestParser
{
    private string $buffer = '';

    /** @var array<string, string>|null */
    private ?array $params = null;

    private int $bodyLeft = 0;

    private ?ScgiException $error = null;

    public function __construct(private readonly int $maxHeaderBytes = 65536) {}

    /**
     * @return array<string, string>|null the params, on the call that completes them
     *
     * @throws ScgiException
     */
    public function feed(string $bytes): ?array
    {
        if ($this->error !== null) {
            throw $this->error;
        }
        if ($this->params !== null) {
            if (\strlen($bytes) > $this->bodyLeft) {
                $this->fail('More bytes than CONTENT_LENGTH');
            }
            $this->bodyLeft -= \strlen($bytes);
            $this->buffer .= $bytes;

            return null;
        }
        $this->buffer .= $bytes;
        $colon = \strpos($this->buffer, ':');
        if ($colon === false) {
            if (\strlen($this->buffer) > 10 || \strspn($this->buffer, '0123456789') !== \strlen($this->buffer)) {
                $this->fail('Malformed netstring length');
            }

            return null;
        }
        $digits = \substr($this->buffer, 0, $colon);
        if ($digits === '' || \strspn($digits, '0123456789') !== $colon || ($colon > 1 && $digits[0] === '0')) {
            $this->fail('Malformed netstring length');
        }
        $length = (int) $digits;
        if ($length > $this->maxHeaderBytes) {
            $this->fail("SCGI headers exceed {$this->maxHeaderBytes} bytes");
        }
        if (\strlen($this->buffer) < $colon + 1 + $length + 1) {
            return null;
        }
        if ($this->buffer[$colon + 1 + $length] !== ',') {
            $this->fail('The netstring does not end in a comma');
        }
        $params = self::parseBlock(\substr($this->buffer, $colon + 1, $length));
        $rest = (string) \substr($this->buffer, $colon + $length + 2);
        $this->buffer = '';
        $this->params = $params;
        $this->bodyLeft = (int) $params['CONTENT_LENGTH'];

        $this->feed($rest);

        return $params;
    }

    public function body(): string
    {
        $body = $this->params === null ? '' : $this->buffer;
        if ($this->params !== null) {
            $this->buffer = '';
        }

        return $body;
    }

    /** @return array<string, string>|null */
    public function params(): ?array
    {
        return $this->params;
    }

    public function isComplete(): bool
    {
        return $this->params !== null && $this->bodyLeft === 0;
    }

    /**
     * @return array<string, string>
     *
     * @throws ScgiException
     */
    private function parseBlock(string $block): array
    {
        if ($block === '' || $block[-1] !== "\0") {
            $this->fail('The SCGI header block must end in NUL');
        }
        $parts = \explode("\0", \substr($block, 0, -1));
        if (\count($parts) % 2 !== 0) {
            $this->fail('An SCGI header has no value');
        }
        if ($parts[0] !== 'CONTENT_LENGTH') {
            $this->fail('The first SCGI header must be CONTENT_LENGTH');
        }
        $params = [];
        for ($i = 0, $n = \count($parts); $i < $n; $i += 2) {
            $name = $parts[$i];
            if ($name === '' || isset($params[$name])) {
                $this->fail('Empty or repeated SCGI header name ' . \json_encode($name));
            }
            $params[$name] = $parts[$i + 1];
        }
        $length = $params['CONTENT_LENGTH'];
        if ($length === '' || \strspn($length, '0123456789') !== \strlen($length) || \strlen($length) > 15 || ($length[0] === '0' && $length !== '0')) {
            $this->fail('Malformed CONTENT_LENGTH ' . \json_encode($length));
        }
        if (($params['SCGI'] ?? null) !== '1') {
            $this->fail('The SCGI header must be 1');
        }

        return $params;
    }

    /** @throws ScgiException */
    private function fail(string $message): never
    {
        $this->error = new ScgiException($message);
        $this->buffer = '';
        throw $this->error;
    }
}
