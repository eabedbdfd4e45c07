<?php

declare(strict_types=1);

namespace Kiln\Server;

/**
 * The worker's side of the conversation with its Service: what the service tells the worker.
 * Implemented by the worker; the service only calls it.
 */
interface WorkerContext
{
    /** One request was answered (counts toward max_requests; the first marks the worker healthy). */
    public function requestServed(): void;

    /**
     * The service began its first request (called once, before its handler runs): the worker came up fine, so
     * a crash from now on is the request's, not a failed start, and the worker is replaced at once.
     */
    public function firstRequestBegan(): void;

    /** The service hit a limit or problem the operator should see. */
    public function log(string $level, string $message): void;

    public function workerId(): int;

    /** The connection counts of the workers sharing this one's listening socket; null: nothing to balance. */
    public function acceptBalance(): ?AcceptBalance;

    /** Whether the listening sockets are shared with the other workers (and their replacements): one accept queue. */
    public function sharesListeners(): bool;

    /**
     * The worker is ending on its own (a script's exit(), a fatal error) and first finishes the responses
     * under way: its replacement is started now. Returns how long the finishing may take (seconds).
     */
    public function retiring(string $reason): float;

    /**
     * Seconds a drain may take before the worker stops what is left (--drain-timeout): long-lived
     * connections (WebSocket) are asked to close shortly before it.
     */
    public function drainTimeout(): float;

    /**
     * How many of something the service holds now (`websocket`: open WebSocket connections), shown per worker
     * by `kiln status`. Cheap: the worker only records it and reports changes once a second. $name is a
     * lower-case word.
     */
    public function count(string $name, int $value): void;

    /**
     * This worker's metrics (sent to the supervisor once a second and served summed at /metrics), or null when
     * --admin-listen is off: a service then measures nothing.
     */
    public function metrics(): ?Metrics\Registry;
}
