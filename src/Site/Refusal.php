<?php

declare(strict_types=1);

namespace Kiln\Site;

/** A request path that is not served: 400 (malformed), 403 (source, directory without index), 404. */
final class Refusal
{
    public function __construct(
        public readonly int $status,
        /** Why, for logs and tests; never sent to the client. */
        public readonly string $reason,
        /** Whether the reason goes to the error log: a refusal of what Apache may serve (a symlink out of the root). */
        public readonly bool $logged = false,
    ) {}
}
