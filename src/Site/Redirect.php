<?php

declare(strict_types=1);

namespace Kiln\Site;

/** A request path that names a directory without its trailing slash: sent elsewhere, query kept. */
final class Redirect
{
    public function __construct(
        /** An absolute path (never `//host`), percent-encoded, with the query when there was one. */
        public readonly string $location,
        public readonly int $status = 301,
    ) {}
}
