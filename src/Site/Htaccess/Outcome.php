<?php

declare(strict_types=1);

namespace Kiln\Site\Htaccess;

/** What .htaccess files make of a request: go on (maybe with a rewritten path), redirect, or refuse. */
final class Outcome
{
    /** @param array<string, string> $env variables for the script (E=, SetEnv, REDIRECT_*), beneath the CGI ones */
    public function __construct(
        public readonly Verdict $verdict,
        /** The path to serve, percent-encoded as on a request line (the original one when not rewritten). */
        public readonly string $path,
        public readonly string $query,
        /** What applies to the response and the script: headers, expiry, types, error documents, php ini, index. */
        public readonly Settings $settings,
        public readonly array $env = [],
        public readonly int $status = 200,
        public readonly ?string $location = null,
        /** Whether a RewriteRule changed the path (the document root's own front-controller fallback still applies). */
        public readonly bool $rewritten = false,
        /** A RewriteRule's [T=type]: the response's Content-Type. */
        public readonly ?string $type = null,
        /** Why, for logs: the rule or the access directive that decided. */
        public readonly string $reason = '',
    ) {}
}
