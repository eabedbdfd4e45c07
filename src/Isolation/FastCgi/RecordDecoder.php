<?php

declare(strict_types=1);

namespace Kiln\Isolation\FastCgi;

/**
 * Resumable record decoder: feed() bytes as they arrive, then call next() until it returns null ("need more
 * bytes"). Padding is skipped. What can be checked from a record's header is checked as soon as the header
 * is complete: the version, a type of 0, the request id (0 for management records, non-zero for the others)
 * and the length of fixed-size bodies. After a ProtocolException the decoder is dead and throws it again.
 */
final class RecordDecoder
{
    private const HEADER = 8;
    private const STDOUT = RecordType::Stdout->value;
    private const STDERR = RecordType::Stderr->value;
    private const END_REQUEST = RecordType::EndRequest->value;
    /** Consumed bytes are cut off the buffer once this many have accumulated (not after every record). */
    private const COMPACT = 65536;

    private string $buffer = '';
    private int $offset = 0;
    private ?ProtocolException $error = null;

    /** @throws ProtocolException after an earlier error */
    public function feed(string $bytes): void
    {
        if ($this->error !== null) {
            throw $this->error;
        }
        if ($this->offset === \strlen($this->buffer)) {
            $this->buffer = $bytes;
            $this->offset = 0;
        } else {
            $this->buffer .= $bytes;
        }
    }

    /**
     * The next complete record, or null until more bytes are fed.
     *
     * @throws ProtocolException
     */
    public function next(): ?Record
    {
        $content = $this->nextContent($type, $requestId);

        return $content === null ? null : new Record($type, $requestId, $content);
    }

    /**
     * next() without the Record object, for a client reading every record of every request: the content of
     * the next complete record, with its type and request id put in $type and $requestId; null until more
     * bytes are fed (the two are then left alone). The same checks as next().
     *
     * @param-out int $type
     * @param-out int $requestId
     *
     * @throws ProtocolException
     */
    public function nextContent(?int &$type, ?int &$requestId): ?string
    {
        if ($this->error !== null) {
            throw $this->error;
        }
        $available = \strlen($this->buffer) - $this->offset;
        if ($available < self::HEADER) {
            return null;
        }
        $buffer = $this->buffer;
        $at = $this->offset;
        $typeId = \ord($buffer[$at + 1]);
        $id = \ord($buffer[$at + 2]) << 8 | \ord($buffer[$at + 3]);
        $length = \ord($buffer[$at + 4]) << 8 | \ord($buffer[$at + 5]);
        // STDOUT, STDERR and END_REQUEST of a request (nearly every record a responder sends) are checked here.
        if (($typeId !== self::STDOUT && $typeId !== self::STDERR && ($typeId !== self::END_REQUEST || $length !== 8))
            || $id === 0 || $buffer[$at] !== "\x01") {
            $this->check(\ord($buffer[$at]), $typeId, $id, $length);
        }
        $total = self::HEADER + $length + \ord($buffer[$at + 6]);
        if ($available < $total) {
            return null;
        }
        $content = $length === 0 ? '' : \substr($buffer, $at + self::HEADER, $length);
        $this->offset += $total;
        if ($this->offset === \strlen($this->buffer)) {
            $this->buffer = '';
            $this->offset = 0;
        } elseif ($this->offset >= self::COMPACT) {
            $this->buffer = \substr($this->buffer, $this->offset);
            $this->offset = 0;
        }
        $type = $typeId;
        $requestId = $id;

        return $content;
    }

    /** Bytes fed but not yet returned as records. */
    public function buffered(): int
    {
        return \strlen($this->buffer) - $this->offset;
    }

    /**
     * The byte stream ended.
     *
     * @throws ProtocolException when it ended inside a record
     */
    public function close(): void
    {
        if ($this->error !== null) {
            throw $this->error;
        }
        $left = $this->buffered();
        if ($left > 0) {
            $this->fail("The FastCGI stream ended inside a record ({$left} bytes of it received)");
        }
    }

    /** @throws ProtocolException */
    private function check(int $version, int $type, int $requestId, int $length): void
    {
        if ($version !== RecordEncoder::VERSION) {
            $this->fail("Unsupported FastCGI version {$version} (only 1 exists): the peer does not speak FastCGI");
        }
        if ($type === 0) {
            $this->fail('Invalid FastCGI record type 0');
        }
        $known = RecordType::tryFrom($type);
        if ($known === null) {
            return; // passed on, so a responder can answer UNKNOWN_TYPE
        }
        if ($known->isManagement() !== ($requestId === 0)) {
            $this->fail($known->isManagement()
                ? "A {$known->name} record must have request id 0, got {$requestId}"
                : "A {$known->name} record must have a non-zero request id");
        }
        $fixed = $known->fixedLength();
        if ($fixed !== null && $length !== $fixed) {
            $this->fail("A {$known->name} record must hold {$fixed} bytes, its header says {$length}");
        }
    }

    /** @throws ProtocolException */
    private function fail(string $message): never
    {
        $this->error = new ProtocolException($message);
        $this->buffer = '';
        $this->offset = 0;

        throw $this->error;
    }
}
