<?php

declare(strict_types=1);

namespace Kiln\Isolation\FastCgi;

/** The body of a BEGIN_REQUEST record: the role asked for and the flags (FCGI_KEEP_CONN). */
final class BeginRequest
{
    public const KEEP_CONN = 1;

    public function __construct(
        public readonly int $requestId,
        /** The raw role number; role() maps it. */
        public readonly int $roleId,
        public readonly int $flags,
    ) {}

    /** Null for a role FastCGI 1.0 does not define (answer END_REQUEST with UnknownRole). */
    public function role(): ?Role
    {
        return Role::tryFrom($this->roleId);
    }

    /** The application must keep the connection open after this request. */
    public function keepConnection(): bool
    {
        return ($this->flags & self::KEEP_CONN) !== 0;
    }
}
