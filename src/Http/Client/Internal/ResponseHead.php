<?php

declare(strict_types=1);

namespace Kiln\Http\Client\Internal;

/**
 * The status line and header block of a final (non-1xx) response.
 *
 * @internal
 */
final class ResponseHead
{
    /** @param array<string, list<string>> $headers lower-cased names, values in wire order */
    public function __construct(
        public readonly string $protocol,
        public readonly int $status,
        public readonly string $reason,
        public readonly array $headers,
    ) {}
}
