<?php

declare(strict_types=1);

namespace Kiln\Isolation\FastCgi;

/** Settings of a FastCgiClient; every limit has a safe default. */
final class FastCgiOptions
{
    public function __construct(
        /** Seconds to establish a TCP connection before FastCgiTimeoutException. */
        public readonly float $connectTimeout = 5.0,
        /**
         * Seconds the responder may stay silent while a request is in flight: not reading the request, not
         * sending a single record (nginx's fastcgi_read_timeout). Also the longest wait for a free connection.
         */
        public readonly float $readTimeout = 60.0,
        /** Seconds a whole request may take, from the first wait to END_REQUEST; null: no total limit. */
        public readonly ?float $requestTimeout = null,
        /**
         * Most connections open per address. With kept connections, each one holds a worker of the responder
         * (a php-fpm child serves one connection until it closes), so this MUST NOT exceed the responder's
         * worker count (php-fpm pm.max_children), or a request can wait on a connection no worker accepts.
         */
        public readonly int $maxConnections = 4,
        /** Ask the responder to keep connections open (FCGI_KEEP_CONN) and reuse them. */
        public readonly bool $keepConnections = true,
        /** Seconds an idle kept connection stays in the pool. */
        public readonly float $idleTimeout = 10.0,
        /** Seconds to wait for END_REQUEST after ABORT_REQUEST before closing the connection. */
        public readonly float $abortGrace = 2.0,
        /** Longest STDERR line handed to the callback; longer lines come in pieces. */
        public readonly int $maxStderrLine = 8192,
        /**
         * Peek at an idle kept connection before it is reused, to replace one the responder closed meanwhile
         * without sending anything on it. Turn off only where the caller learns by other means that a
         * responder went away (a pool that owns its responders, as the php-cgi pool does).
         */
        public readonly bool $checkIdleConnections = true,
        /**
         * With kept connections, send a request that may not be sent twice (not idempotent, or a body that
         * cannot be replayed) on a kept connection too. Off: such a request gets a new connection without
         * FCGI_KEEP_CONN, so a responder that closes a kept connection as it leaves (php-cgi, php-fpm at their
         * request limit) can never have been sent it; only requests that may be sent again use kept ones.
         */
        public readonly bool $keepUnrepeatable = true,
        /** Most requests one kept connection carries before it is closed; 0: no limit. */
        public readonly int $maxRequestsPerConnection = 0,
        /** Seconds after its opening a connection is no longer kept for another request; 0: no limit. */
        public readonly float $maxConnectionAge = 0.0,
        /**
         * Reuse a kept connection whose request was given up (ABORT_REQUEST) once END_REQUEST came, as the
         * protocol allows. Off for PHP's own responders (php-cgi, php-fpm): they read the ABORT_REQUEST record
         * where they expect the next BEGIN_REQUEST and close the connection (main/fastcgi.c).
         */
        public readonly bool $reuseAfterAbort = true,
    ) {
        $limits = ['connectTimeout' => $connectTimeout, 'readTimeout' => $readTimeout, 'idleTimeout' => $idleTimeout, 'abortGrace' => $abortGrace];
        if ($requestTimeout !== null) {
            $limits['requestTimeout'] = $requestTimeout;
        }
        foreach ($limits as $name => $seconds) {
            if (!($seconds > 0) || \is_infinite($seconds)) {
                throw new \ValueError("FastCgiOptions::\${$name} must be a positive number of seconds, got {$seconds}");
            }
        }
        if ($maxConnections < 1 || $maxStderrLine < 1) {
            throw new \ValueError('FastCgiOptions: maxConnections and maxStderrLine must be at least 1');
        }
        if (!($maxConnectionAge >= 0) || \is_infinite($maxConnectionAge)) {
            throw new \ValueError("FastCgiOptions::\$maxConnectionAge must be 0 (no limit) or a positive number of seconds, got {$maxConnectionAge}");
        }
        if ($maxRequestsPerConnection < 0) {
            throw new \ValueError("FastCgiOptions::\$maxRequestsPerConnection must be 0 (no limit) or more, got {$maxRequestsPerConnection}");
        }
    }
}
