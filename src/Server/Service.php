<?php

declare(strict_types=1);

namespace Kiln\Server;

/**
 * What a worker process runs on its listeners (the HTTP server is one). The Server layer knows nothing of
 * the protocol; it boots a Service after fork, then tells it when to drain or stop.
 *
 * Contract:
 * - start() is called once, inside the worker, with the event loop not yet running. It MUST NOT block:
 *   it registers watchers on the listeners and returns. The worker then runs the loop.
 * - drain() stops accepting new connections at once, lets in-flight requests finish, closes idle
 *   keep-alive connections (an HTTP server after a short grace, answering what arrives meanwhile), and
 *   calls $done exactly once when nothing is left (or the worker's drain deadline passes first, in which
 *   case the worker calls stop()).
 * - windDown() says the worker is to be replaced (--max-requests, --max-memory) and drain() will follow once
 *   its replacement is ready: the service keeps serving but ends each connection after its next response
 *   (an HTTP response then says `Connection: close`), so that the drain closes no connection a client is
 *   sending on. It is a hint: a drain may come without it, and it may be called more than once.
 * - stop() closes every connection and watcher now. It MAY be called after drain().
 * - The service reports progress through the WorkerContext it got in start().
 */
interface Service
{
    /** @param list<resource> $listeners server sockets, already bound and listening, non-blocking */
    public function start(array $listeners, WorkerContext $context): void;

    /** @param \Closure(): void $done */
    public function drain(\Closure $done): void;

    public function windDown(): void;

    public function stop(): void;
}
