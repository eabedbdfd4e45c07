<?php

declare(strict_types=1);

namespace Kiln\Http\Client\Internal;

/**
 * The end of a response body.
 *
 * @internal
 */
final class ResponseEnd
{
    /** @param array<string, list<string>> $trailers lower-cased names (chunked bodies only) */
    public function __construct(
        public readonly array $trailers,
        /** Framing was self-delimiting and nobody asked to close; the caller also checks no stray bytes follow. */
        public readonly bool $reusable,
    ) {}
}
