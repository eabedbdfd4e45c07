<?php

declare(strict_types=1);

namespace Kiln\Isolation\FastCgi;

/**
 * One FastCGI record as it was on the wire, without its padding. The type is the raw number so that a
 * responder can answer a type it does not know with UNKNOWN_TYPE; type() maps it to a RecordType.
 * The typed readers check the content they decode and throw ProtocolException when it is malformed.
 */
final class Record
{
    public const MAX_CONTENT = 65535;

    public function __construct(
        public readonly int $type,
        public readonly int $requestId,
        public readonly string $content = '',
    ) {
        if ($type < 1 || $type > 255 || $requestId < 0 || $requestId > 65535 || \strlen($content) > self::MAX_CONTENT) {
            throw new \ValueError('A FastCGI record has a type 1-255, a request id 0-65535 and at most 65535 bytes of content');
        }
    }

    /** Null for a type FastCGI 1.0 does not define. */
    public function type(): ?RecordType
    {
        return RecordType::tryFrom($this->type);
    }

    public function is(RecordType $type): bool
    {
        return $this->type === $type->value;
    }

    /** An empty record of a stream type ends that stream. */
    public function isEndOfStream(): bool
    {
        return $this->content === '';
    }

    /** @throws ProtocolException */
    public function beginRequest(): BeginRequest
    {
        $this->expect(RecordType::BeginRequest);
        /** @var array{role: int, flags: int} $body */
        $body = \unpack('nrole/Cflags', $this->content);

        return new BeginRequest($this->requestId, $body['role'], $body['flags']);
    }

    /** @throws ProtocolException */
    public function endRequest(): EndRequest
    {
        $this->expect(RecordType::EndRequest);
        /** @var array{app: int, protocol: int} $body */
        $body = \unpack('Napp/Cprotocol', $this->content);

        return new EndRequest($this->requestId, $body['app'], $body['protocol']);
    }

    /**
     * The record type an UNKNOWN_TYPE record reports.
     *
     * @throws ProtocolException
     */
    public function unknownType(): int
    {
        $this->expect(RecordType::UnknownType);

        return \ord($this->content[0]);
    }

    private function expect(RecordType $type): void
    {
        if ($this->type !== $type->value) {
            throw new \LogicException("Not a {$type->name} record (type {$this->type})");
        }
        $length = $type->fixedLength();
        if ($length !== null && \strlen($this->content) !== $length) {
            throw new ProtocolException("A {$type->name} record must hold {$length} bytes, got " . \strlen($this->content));
        }
    }
}
