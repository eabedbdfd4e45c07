<?php

declare(strict_types=1);

namespace Kiln\Site\Htaccess;

/** What one round of a directory's rewrite rules did. */
final class RewriteResult
{
    /**
     * @param ?string $path the new decoded URL path (internal rewrite), null: unchanged
     * @param ?string $location a redirect's full URL
     * @param int $status 3xx with a location, 403/410 (or an R=4xx/5xx) refusal, 0 otherwise
     */
    public function __construct(
        public readonly ?string $path,
        public readonly string $query,
        public readonly ?string $location = null,
        public readonly int $status = 0,
        /** [END]: no further round of rewriting. */
        public readonly bool $end = false,
        /** [T=type] */
        public readonly ?string $type = null,
    ) {}
}
