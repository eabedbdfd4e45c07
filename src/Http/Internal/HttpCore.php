<?php

declare(strict_types=1);

namespace Kiln\Http\Internal;

use Kiln\Http\AccessLog;
use Kiln\Http\ErrorResponse;
use Kiln\Http\Limits;
use Kiln\Http\Request;
use Kiln\Http\RequestHandler;
use Kiln\Http\Response;
use Kiln\Http\Sse\EventStream;
use Kiln\Http\Wire\RequestHead;
use Kiln\Http\Wire\ResponseEncoder;
use Kiln\Http\WriteBatch;
use Kiln\Loop\Loop;
use Kiln\Server\WorkerContext;

/**
 * What every connection of a worker shares: the handler, the encoder, the loop turn's write batch, the
 * registry of open connections, and the code that turns a handler's Response into bytes on the wire (what is
 * recorded of each request, its access log line and metrics, is RequestRecord's).
 *
 * Its life is a CoreState, changed only by the named operations below (an illegal change throws \Error):
 * windDown() when the worker is to be replaced, startDraining() for a graceful stop, finishLastResponses() when
 * the worker process ends on its own (FatalGuard), stop() to close everything now. A drain or a finish ends, and calls its $onEmpty once,
 * when the last connection is gone; a drain also waits for the long-lived connections of other protocols
 * registered with addLongLived().
 *
 * Any connected stream can be served (open()): a socket accepted by HttpServer, or one end of a
 * stream_socket_pair() in a test.
 *
 * @internal
 */
final class HttpCore
{
    private CoreState $state = CoreState::Serving;

    /** @var array<int, Connection> */
    private array $connections = [];

    private int $nextId = 1;

    /** Whether a request began here yet (the worker is told of the first). */
    private bool $began = false;

    /** @var array<int, Request> connection id => the request whose handler runs now, suspended or not (the in-flight ones) */
    private array $serving = [];

    public readonly ResponseEncoder $encoder;

    /** The responses of one loop turn, written together (one for every connection of this core). */
    public readonly WriteBatch $writeBatch;

    private readonly ResponseSender $sender;

    /** The worker's open event streams. */
    private readonly PushedStreams $pushes;

    /** While finishing: how many connections were closed with their last response written whole. */
    private int $lastResponsesWritten = 0;

    /** @var \Closure(): void|null called once when a drain or a finish has nothing left */
    private ?\Closure $onEmpty = null;

    private readonly DrainGrace $grace;

    /** @var array<int, \Closure(bool): void> long-lived connections of other protocols, by registration */
    private array $longLived = [];

    private int $nextLongLived = 0;

    /** The access log, metrics and warnings of each request. */
    private readonly RequestRecord $record;

    /** The record's: durations are taken; anything is recorded of a request answered (read once per request). */
    private readonly bool $timed;
    private readonly bool $recorded;

    /** Responses queued whole or sent: all, or with $scriptsOnly those of requests that ran a script. */
    private int $answered = 0;

    public function __construct(
        private readonly RequestHandler $handler,
        private readonly Limits $limits,
        private readonly WorkerContext $context,
        ?AccessLog $accessLog,
        /** seconds past which a request is logged as slow; 0: off */
        float $slowRequest = 0.0,
        /** answered() counts only requests that ran a script (a Request::TIER attribute other than `static`) */
        private readonly bool $scriptsOnly = false,
    ) {
        $this->encoder = new ResponseEncoder();
        $this->writeBatch = new WriteBatch($limits->responseHold);
        $this->grace = new DrainGrace();
        $this->sender = new ResponseSender($this->encoder, $context);
        $this->pushes = new PushedStreams($this, $this->encoder, $limits, $context);
        $this->record = new RequestRecord($context, $accessLog, $slowRequest, fn(): array => [\count($this->serving), \count($this->connections) - $this->pushes->openCount()]);
        $this->timed = $this->record->timed;
        $this->recorded = $this->record->active;
    }

    public function state(): CoreState
    {
        return $this->state;
    }

    /**
     * Serves a connected, non-blocking stream from now on.
     *
     * @param resource $socket
     * @throws \Error when the core is finishing or stopped
     */
    public function open(
        mixed $socket,
        string $remoteAddress,
        int $remotePort,
        string $localAddress = '',
        int $localPort = 0,
    ): Connection {
        if (!$this->state->serves() && $this->state !== CoreState::Draining) {
            throw new \Error("The HTTP core is {$this->state->value}: it takes no new connection");
        }
        $connection = new Connection($socket, $this->nextId++, $this, $this->limits, $remoteAddress, $remotePort, $localAddress, $localPort);
        return $this->connections[$connection->id] = $connection;
    }

    /** @return array<int, Connection> the open connections, by id */
    public function connections(): array
    {
        return $this->connections;
    }

    public function connectionCount(): int
    {
        return \count($this->connections);
    }

    /**
     * Called by a connection as it closes or hands its socket over.
     *
     * @param bool $written whether its last response was written whole (counted while finishing)
     */
    public function forget(Connection $connection, bool $written = false): void
    {
        unset($this->connections[$connection->id]);
        if ($written && $this->state === CoreState::Finishing) {
            $this->lastResponsesWritten++;
        }
        $this->settle();
    }

    /**
     * The worker is to be replaced (--max-requests, --max-memory) and its drain will follow: from now on each
     * connection closes after its next response, which says so (`Connection: close`). A connection the drain
     * closes while idle may be carrying the client's next request already (the client sees the connection
     * closed, not an answer); winding down first leaves the drain only the connections idle since.
     *
     * @throws \Error unless the core is serving
     */
    public function windDown(): void
    {
        $this->state = $this->state->to(CoreState::WindingDown);
    }

    /**
     * A graceful stop: what is queued is written, the requests already sent are served with `Connection: close`,
     * idle connections close, and long-lived connections are asked to close. $onEmpty is called once when none of
     * them is left (at once when none is open).
     *
     * With an $idleGrace, an idle connection stays open that long, and a request its client sends meanwhile is
     * answered (with `Connection: close`): a client sending its next request on a kept connection as the drain
     * begins, or one whose connection the drain accepted from the backlog, gets its answer instead of a closed
     * connection. Those still idle when it ends are closed then; without a grace, at once. A response whose head
     * promised to keep the connection and that ends within the grace (an event stream the drain ends, a streamed
     * body under way) leaves its connection idle for the rest of it too: a proxy that reuses the connection at once
     * (nginx's upstream keep-alive, as a client reconnects its stream) gets an answer instead of a closed connection.
     *
     * @param \Closure(): void $onEmpty
     * @throws \Error unless the core is serving or winding down
     */
    public function startDraining(\Closure $onEmpty, float $idleGrace = 0.0): void
    {
        $this->state = $this->state->to(CoreState::Draining);
        $this->onEmpty = $onEmpty;
        $this->grace->begin($idleGrace); // first: the streams the drain ends keep their connections for it
        $this->writeBatch->flush(); // a connection whose response is written is idle: it closes now, or after the grace
        foreach ($this->connections as $connection) {
            $connection->drain();
        }
        foreach ($this->longLived as $close) {
            $close(true);
        }
        $this->grace->whenOver($this->connections !== [], $this->closeIdle(...));
        $this->settle();
    }

    private function closeIdle(): void
    {
        foreach ($this->connections as $connection) {
            if ($connection->isIdle()) {
                $connection->close();
            } elseif ($connection->awaitsRequest()) {
                $connection->closeAfterFlush(); // idle, but the end of its last response is still being written
            }
        }
    }

    /** Whether a response whose head promised keep-alive keeps its connection now that it ended (see startDraining()). */
    private function keeps(bool $keepAlive): bool
    {
        return $keepAlive && ($this->state !== CoreState::Draining || $this->grace->running());
    }

    /**
     * The worker process ends on its own (exit(), a fatal error) with responses under way: from now on each
     * connection closes once its response is out and no request is started. $onEmpty is called once when the
     * last connection is gone. Long-lived connections of other protocols are not waited for: the process
     * ending closes them.
     *
     * @param \Closure(): void $onEmpty
     * @throws \Error when the core is finishing already or stopped
     */
    public function finishLastResponses(\Closure $onEmpty): void
    {
        $this->state = $this->state->to(CoreState::Finishing);
        $this->onEmpty = $onEmpty;
        $this->lastResponsesWritten = 0;
        $this->settle();
    }

    /** While finishing (or once finished): the connections closed with their last response written whole. */
    public function lastResponsesWritten(): int
    {
        return $this->lastResponsesWritten;
    }

    /**
     * Closes everything now: the responses of this loop turn still leave, then every connection closes and
     * long-lived connections are told to close at once. A drain or finish under way never calls its $onEmpty.
     *
     * @throws \Error when the core is stopped already
     */
    public function stop(): void
    {
        $this->state = $this->state->to(CoreState::Stopped);
        $this->onEmpty = null;
        $this->grace->cancel();
        $this->writeBatch->flush();
        foreach ($this->connections as $connection) {
            $connection->close();
        }
        foreach ($this->longLived as $close) {
            $close(false);
        }
        $this->longLived = [];
        $this->flushLogs();
    }

    /**
     * Registers a long-lived connection of another protocol that took a socket over (a WebSocket after its
     * 101): a drain completes only once it has closed.
     *
     * @param \Closure(bool): void $close asked to close: gracefully (true: a drain; it may take its time) or
     *        at once (false: a stop). Called at once with true if the core drains already.
     * @return \Closure(): void to call once the connection has closed, whatever closed it
     */
    public function addLongLived(\Closure $close): \Closure
    {
        $key = $this->nextLongLived++;
        $this->longLived[$key] = $close;
        if ($this->state === CoreState::Draining) {
            $close(true);
        }
        return function () use ($key): void {
            unset($this->longLived[$key]);
            $this->settle();
        };
    }

    /** Ends a drain or a finish once nothing is left: the core stops, then $onEmpty runs. */
    private function settle(): void
    {
        if ($this->onEmpty === null || $this->connections !== []
            || ($this->state === CoreState::Draining && $this->longLived !== [])) {
            return;
        }
        $done = $this->onEmpty;
        $this->onEmpty = null;
        $this->grace->cancel();
        $this->state = $this->state->to(CoreState::Stopped);
        $this->flushLogs();
        $done();
    }

    /** See WorkerContext::retiring(). */
    public function retiring(string $reason): float
    {
        return $this->context->retiring($reason);
    }

    /** Responses queued whole or sent so far (an event stream's not counted; see the constructor's $scriptsOnly). */
    public function answered(): int
    {
        return $this->answered;
    }

    /**
     * Runs inside the request's Fiber. No finally here nor in sendWhole(): the JIT traces none; a Fiber destroyed
     * while its handler is suspended leaves its request listed as running (docs/design/010-no-finally-on-the-hot-path.md).
     */
    public function respond(Connection $connection, Request $request): void
    {
        $id = $connection->id;
        if ($this->timed) {
            $this->record->dispatched($id);
        }
        if (\count($this->serving) >= $this->limits->concurrency) {
            $response = ErrorResponse::plain(503, '', ['Retry-After' => '1']);
            $this->record->refused(503, 'concurrency');
        } else {
            if (!$this->began) {
                $this->began = true;
                $this->context->firstRequestBegan(); // a crash in it is then the request's, not the worker's start
            }
            $this->serving[$id] = $request;
            $failure = null;
            try {
                $response = $this->handler->handle($request);
            } catch (\Throwable $failure) {
                $response = ErrorResponse::plain(500);
            }
            unset($this->serving[$id]);
            $failure ??= $response->failure();
            if ($failure !== null) {
                $this->record->failed($request, $failure);
            }
        }
        $head = $request->head;
        $keepAlive = $head->keepAlive && $this->state === CoreState::Serving
            && (!$connection->peerClosed || $connection->mayKeepAlive())
            && $connection->served + 1 < $this->limits->keepAliveRequests;
        $body = $response->body();
        $status = $response->status();
        if (\is_string($body) && $status >= 200) {
            $this->sendWhole($connection, $request, $response, $status, $body, $keepAlive);
        } elseif ($body instanceof EventStream) {
            $this->push($connection, $request, $response, $body, $keepAlive);
        } else {
            $this->send($connection, $request, $response, $keepAlive);
        }
    }

    /** A string body and a final status (nearly every response): one write with its head, never suspends. */
    private function sendWhole(Connection $connection, Request $request, Response $response, int $status, string $body, bool $keepAlive): void
    {
        $sent = 0;
        $head = $request->head;
        try {
            $sent = $this->sender->writeWhole($connection, $head, $response, $status, $body, $keepAlive);
        } catch (\ValueError $e) { // a response we refuse to emit (an invalid status): a 500 goes instead
            $sent = $this->sender->refuse($connection, $request, $e, null);
            $keepAlive = false;
            $status = 500;
        } catch (\Throwable $e) {
            $keepAlive = false;
            $this->sendFailed($request, $e);
        }
        if ($request->head->bodyKind !== RequestHead::BODY_NONE) {
            $request->releaseBody(); // a request without a body has no body file nor uploads to remove
        }
        $this->context->requestServed();
        $this->answered += !$this->scriptsOnly || $request->attribute(Request::TIER, 'static') !== 'static' ? 1 : 0;
        if ($this->recorded) {
            $this->record->answered($connection, $request, $status, $sent);
        }
        $connection->responded($keepAlive, $this->state);
    }

    /** A streamed body or an interim status: the Fiber may suspend, and be destroyed, meanwhile: hence the finally. */
    private function send(Connection $connection, Request $request, Response $response, bool $keepAlive): void
    {
        $sent = 0;
        $status = $response->status();
        try {
            [$keepAlive, $sent, $status] = $this->sender->send($connection, $request, $response, $keepAlive);
        } catch (\Throwable $e) {
            // Whatever reached the wire cannot be trusted to be a whole response: end the connection.
            $keepAlive = false;
            $this->sendFailed($request, $e);
        } finally {
            $request->releaseBody();
            $this->context->requestServed();
            $this->answered += !$this->scriptsOnly || $request->attribute(Request::TIER, 'static') !== 'static' ? 1 : 0;
            $this->record->answered($connection, $request, $status, $sent);
            $connection->responded($this->keeps($keepAlive), $this->state);
        }
    }

    private function sendFailed(Request $request, \Throwable $e): void
    {
        $head = $request->head;
        $this->context->log('error', 'Sending the response to ' . $head->method . ' ' . $head->target
            . ' failed: ' . $e::class . ': ' . $e->getMessage());
    }

    /**
     * An event stream: its head is written and the handler's Fiber ends; the response is finished later,
     * by pushFinished(), when the stream or its connection ends.
     */
    private function push(Connection $connection, Request $request, Response $response, EventStream $stream, bool $keepAlive): void
    {
        try {
            $this->pushes->start($connection, $request, $response, $stream, $keepAlive);
        } catch (\Throwable $e) {
            $head = $request->head();
            $this->context->log('error', 'Starting the event stream of ' . $head->method . ' ' . $head->target
                . ' failed: ' . $e::class . ': ' . $e->getMessage());
            $stream->ended();
            if (!$connection->pushing()) {
                $request->releaseBody();
                $connection->responded(false, $this->state);
            } else {
                $connection->close();
            }
        }
    }

    /** An event stream's response is over: counted and logged; its connection goes on unless it closed. */
    public function pushFinished(Connection $connection, Request $request, int $status, int $sent, bool $keepAlive, bool $connectionOpen): void
    {
        $request->releaseBody();
        $this->context->requestServed();
        $this->record->answered($connection, $request, $status, $sent);
        if ($connectionOpen) {
            $connection->responded($this->keeps($keepAlive), $this->state);
        }
    }

    /** @return list<Request> the requests whose handlers are running (suspended ones included) */
    public function running(): array
    {
        return array_values($this->serving);
    }

    /** The request whose handler is running for this connection now, if any. */
    public function serving(Connection $connection): ?Request
    {
        return $this->serving[$connection->id] ?? null;
    }

    /** A request answered while the process ends (FatalGuard): counted and logged like any other. */
    public function servedAtShutdown(Connection $connection, Request $request, int $status, int $sent): void
    {
        $this->context->requestServed(); // also tells the supervisor this worker was healthy
        $this->record->answered($connection, $request, $status, $sent);
    }

    /**
     * Answers a request the parser refused, then closes: nothing after it on this connection is read. $head is the
     * request's head when it was read whole (a body over the limit); a request whose body was being read has its own.
     */
    public function reject(Connection $connection, int $status, string $reason, ?RequestHead $head = null): void
    {
        $head ??= $connection->bodyHead();
        $response = ErrorResponse::plain($status, $reason);
        $body = $response->body();
        \assert(\is_string($body));
        $connection->write($this->encoder->responseHead($response, \strlen($body), '1.1', false) . $body);
        $this->record->rejected($connection, $head, $status, \strlen($body));
        $connection->closeAfterFlush();
    }

    /** Tells the worker its open HTTP connections and requests in flight (shown by `kiln status`); on the housekeeping tick. */
    public function reportCounts(): void
    {
        // By kind, each connection once: one carrying an event stream counts as `sse` (PushedStreams), not here.
        $this->context->count('http', \count($this->connections) - $this->pushes->openCount());
        $this->context->count('inflight', \count($this->serving));
    }

    /** A connection refused at the per-worker cap (HttpServer answers it a 503 before any request). */
    public function shed(): void
    {
        $this->record->refused(503, 'connections');
    }

    public function log(string $level, string $message): void
    {
        $this->context->log($level, $message);
    }

    public function flushLogs(): void
    {
        $this->record->flush();
    }
}
