<?php

declare(strict_types=1);

namespace Kiln\Http\Wire;

/** The request body is complete. Trailers (chunked bodies only) use lower-cased names, like RequestHead. */
final class MessageEnd
{
    /** @param array<string, list<string>> $trailers */
    public function __construct(public readonly array $trailers = []) {}
}
