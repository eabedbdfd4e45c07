<?php

declare(strict_types=1);

namespace Kiln\Http;

/**
 * Every limit the HTTP engine enforces, with safe defaults. Each is a knob: config key, CLI option
 * --limit-NAME=VALUE and env KILN_LIMIT_NAME (see docs/configuration.md).
 */
final class Limits
{
    public function __construct(
        /** Longest request line in bytes (method, target, version): over it, 414. */
        public readonly int $requestLine = 8192,
        /** Longest single header field line in bytes: over it, 431. */
        public readonly int $headerLine = 8192,
        /** Whole header block in bytes (request line included): over it, 431. */
        public readonly int $headerBytes = 65536,
        /** Most header fields: over it, 431. */
        public readonly int $headerCount = 100,
        /** Largest request body in bytes: over it, 413. */
        public readonly int $bodySize = 64 * 1024 * 1024,
        /** Bodies above this many bytes are spooled to a temp file instead of memory. */
        public readonly int $bodyMemory = 1024 * 1024,
        /** Seconds from the first byte of a request to the end of its header block (total, not per read): 408. */
        public readonly float $headerTimeout = 10.0,
        /** Seconds allowed with no body bytes arriving while a body is expected: 408. */
        public readonly float $bodyTimeout = 30.0,
        /** Seconds an idle keep-alive connection is kept. */
        public readonly float $keepAliveTimeout = 15.0,
        /** Seconds a pending write may make no progress before the connection is dropped. */
        public readonly float $writeTimeout = 30.0,
        /**
         * Seconds at most that a connection the server closes (after a 413, a 400, its last response) keeps
         * reading and discarding what the client still sends, so the client can read the response.
         */
        public readonly float $lingerTimeout = 5.0,
        /**
         * Most open client connections per worker; past it a new connection gets a 503 and is closed.
         * `kiln serve` sets it from Server\ConnectionPlan: 10,000 with the epoll driver (ext-ffi), 512 with select.
         */
        public readonly int $connections = 512,
        /**
         * Most requests a worker runs at once (handlers in flight, suspended ones included); past it a
         * request gets a 503 with Retry-After at once instead of waiting in an unbounded queue.
         */
        public readonly int $concurrency = 256,
        /** Most requests answered on one keep-alive connection before it is closed. */
        public readonly int $keepAliveRequests = 10000,
        /** Bytes of response output buffered per connection before the producer is paused. */
        public readonly int $writeBuffer = 256 * 1024,
        /**
         * Seconds at most that a finished response waits for the others of its loop turn, so they leave
         * together (WriteBatch); the batch leaves at the end of the turn in any case.
         */
        public readonly float $responseHold = 0.001,
        /** Largest WebSocket message in bytes (all its fragments, after inflating): over it, close 1009. */
        public readonly int $wsMessageBytes = 1024 * 1024,
        /**
         * Bytes of WebSocket output queued per connection: a client that lets more pile up (it stops reading)
         * is closed with 1008 and logged. One message may go past it; nothing is queued after it.
         */
        public readonly int $wsWriteBuffer = 1024 * 1024,
        /**
         * Seconds a WebSocket connection may stay silent: after half of it the server pings, after all of it
         * the connection is closed with 1001.
         */
        public readonly float $wsIdleTimeout = 60.0,
        /** Seconds the server waits for the client's side of a WebSocket close handshake before cutting the connection. */
        public readonly float $wsCloseTimeout = 5.0,
        /** Seconds an event stream (SSE) may stay quiet before the server sends a heartbeat comment. */
        public readonly float $sseHeartbeat = 15.0,
        /** Events a worker keeps per SSE topic for clients that reconnect with Last-Event-ID. */
        public readonly int $sseReplay = 100,
        /**
         * Seconds a worker keeps following an SSE topic (and buffering its events for replay) after its last
         * subscriber there left, so a client that reconnects within it misses nothing.
         */
        public readonly float $sseReplayKeep = 60.0,
    ) {
        /** @var int|float $value */
        foreach (get_object_vars($this) as $name => $value) {
            if ($value <= 0) {
                throw new \ValueError(self::option($name) . " must be greater than zero, got $value");
            }
        }
    }

    /** The same limits with another connection cap (every other limit kept, those added later included). */
    public function withConnections(int $connections): self
    {
        $values = get_object_vars($this);
        $values['connections'] = $connections;
        return (new \ReflectionClass(self::class))->newInstanceArgs($values);
    }

    /** A limit's command-line option: bodySize → `--limit-body-size`. */
    public static function option(string $name): string
    {
        return '--limit-' . strtolower((string) preg_replace('/[A-Z]/', '-$0', $name));
    }

    /** @param array<string, int|float|string> $values keyed by property name */
    public static function fromArray(array $values): self
    {
        $known = [];
        foreach ((new \ReflectionMethod(self::class, '__construct'))->getParameters() as $parameter) {
            $known[$parameter->getName()] = $parameter->getDefaultValue();
        }
        $args = [];
        foreach ($values as $name => $value) {
            if (!array_key_exists($name, $known)) {
                throw new \ValueError('Unknown limit ' . self::option($name) . '; known limits: ' . implode(', ', array_map(self::option(...), array_keys($known))));
            }
            $number = is_float($known[$name])
                ? filter_var($value, FILTER_VALIDATE_FLOAT)
                : filter_var($value, FILTER_VALIDATE_INT);
            if ($number === false) {
                $kind = is_float($known[$name]) ? 'a number' : 'a whole number';
                throw new \ValueError(self::option($name) . " must be $kind, got '$value'");
            }
            $args[$name] = $number;
        }
        return (new \ReflectionClass(self::class))->newInstanceArgs($args);
    }
}
