<?php

declare(strict_types=1);

namespace Kiln\Http\Wire;

/** Some bytes of a request body, decoded (chunk framing removed); never empty. */
final class BodyChunk
{
    public function __construct(public readonly string $data) {}
}
