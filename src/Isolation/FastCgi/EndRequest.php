<?php

declare(strict_types=1);

namespace Kiln\Isolation\FastCgi;

/** The body of an END_REQUEST record: the application's exit status and the protocol-level outcome. */
final class EndRequest
{
    public function __construct(
        public readonly int $requestId,
        /** The application status, like a CGI program's exit code (0-4294967295). */
        public readonly int $appStatus,
        /** The raw protocol status; status() maps it. */
        public readonly int $protocolStatusId = 0,
    ) {}

    /** Null for a status FastCGI 1.0 does not define. */
    public function status(): ?ProtocolStatus
    {
        return ProtocolStatus::tryFrom($this->protocolStatusId);
    }

    public function isComplete(): bool
    {
        return $this->protocolStatusId === ProtocolStatus::RequestComplete->value;
    }
}
