<?php

declare(strict_types=1);

namespace Kiln\Isolation\PhpCgi;

/**
 * Settings of one worker's php-cgi pool (`kiln serve --pool-size --pool-max-requests --pool-queue
 * --pool-reuse --php-cgi --php-ini --pass-env --time-limit --pool-jit --pool-sched`). Checked at construction: \ValueError names the option.
 */
final class PhpCgiOptions
{
    /**
     * @param array<string, string> $phpIni ini overrides for every child (`-d NAME=VALUE`)
     * @param list<string> $passEnv names of environment variables the children get from the worker's
     */
    public function __construct(
        /** The php-cgi binary: an absolute path, or a name looked up in PATH. */
        public readonly string $binary = 'php-cgi',
        /** Children of the server's one php-cgi parent (PHP_FCGI_CHILDREN). */
        public readonly int $size = 4,
        /** Requests a child serves before php-cgi replaces it (PHP_FCGI_MAX_REQUESTS). */
        public readonly int $maxRequests = 10_000,
        /** Requests that may wait for a free child; past that, 503. As many as a worker has connections by default (docs/design/007). */
        public readonly int $queue = 512,
        /** Seconds a request may wait for a child, and then run, each; 0: no limit. */
        public readonly float $timeLimit = 30.0,
        public readonly array $phpIni = [],
        public readonly array $passEnv = [],
        /** Whether the children run the tracing JIT (Kiln::JIT) where $phpIni does not set it. */
        public readonly bool $jit = false,
        /**
         * Most requests one FastCGI connection carries, back to back: a connection whose answer ends while
         * another request of the worker waits is kept for it, if it may be sent twice (docs/design/027).
         * 1: a connection per request.
         */
        public readonly int $reuse = 16,
        /**
         * Whether the children run as batch jobs (SCHED_BATCH): a child woken by a request never preempts the
         * worker that sent it, which goes on with the rest of its turn; nor does one woken by its database's
         * answer preempt anything (docs/design/033). false: they keep the server's own policy.
         */
        public readonly bool $batch = false,
    ) {
        if ($binary === '' || str_contains($binary, "\0")) {
            throw new \ValueError('--php-cgi must name the php-cgi binary');
        }
        if ($size < 1 || $size > 256) {
            throw new \ValueError("--pool-size must be between 1 and 256, got $size");
        }
        if ($maxRequests < 1) {
            throw new \ValueError("--pool-max-requests must be at least 1, got $maxRequests");
        }
        if ($reuse < 1) {
            throw new \ValueError("--pool-reuse must be at least 1, got $reuse");
        }
        if ($queue < 0) {
            throw new \ValueError("--pool-queue must be 0 or more, got $queue");
        }
        if (is_nan($timeLimit) || $timeLimit < 0) {
            throw new \ValueError("--time-limit must be 0 (none) or more seconds, got $timeLimit");
        }
        foreach ($phpIni as $name => $value) {
            if (preg_match('/^[A-Za-z0-9_.\-]+$/', (string) $name) !== 1 || preg_match('/[\r\n\0]/', $value) === 1) {
                throw new \ValueError("--php-ini must be NAME=VALUE with an ini directive name and a one-line value, got '$name'");
            }
        }
        foreach ($passEnv as $name) {
            if (preg_match('/^[A-Za-z_][A-Za-z0-9_]*$/', $name) !== 1) {
                throw new \ValueError("--pass-env must be an environment variable name, got '$name'");
            }
        }
    }
}
