<?php

declare(strict_types=1);

namespace Kiln\Isolation\Fork;

/**
 * What a fork server's children do with a request. The fork server constructs it once (no arguments),
 * calls prepare() once before serving, beforeFork() before each fork, and handle() in each forked child.
 *
 * - handle() runs in a fresh child process whose STDOUT (fd 1) is the client connection: everything it
 *   writes there MUST be a CGI response (RFC 3875 §6: header fields, an empty line, the body). STDERR is
 *   the fork server's, which the worker logs.
 * - handle() returns a file for the fork server's entry script to include at the global scope (top-level
 *   variables of a script are globals, as under PHP's web SAPIs), or null. The child then ends as PHP
 *   does (shutdown functions, destructors, output flush; exit code 0, or what exit() said, 255 on a
 *   fatal error). The parent never sees its state.
 */
interface ForkChild
{
    /** Once, in the fork server, before the first fork: whatever every child should inherit warm. */
    public function prepare(): void;

    /**
     * In the fork server, before the fork for each request: what the server itself should do first (the
     * child inherits it).
     *
     * @param array<string, string> $params the CGI meta-variables of the request
     */
    public function beforeFork(array $params): void;

    /**
     * @param array<string, string> $params the CGI meta-variables of the request
     * @param resource $body the request body, rewound (CONTENT_LENGTH bytes)
     */
    public function handle(array $params, mixed $body): ?string;
}
