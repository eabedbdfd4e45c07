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
use Kiln\Http\Wire\ResponseEncoder;
use Kiln\Server\WorkerContext;

/**
 * What every connection of a worker shares: the handler, the encoder, the registry of open connections,
 * and the code that turns a handler's Response into bytes on the wire.
 *
 * @internal
 */
final class HttpCore
{
    /** @var array<int, Connection> */
    public array $connections = [];

    public bool $draining = false;

    /** Handlers running now (suspended ones included). */
    private int $inFlight = 0;

    /** @var array<int, Request> connection id => the request its handler is running now (read by FatalGuard) */
    private array $serving = [];

    public readonly ResponseEncoder $encoder;

    private readonly ResponseSender $sender;

    /** The worker's open event streams. */
    private readonly PushedStreams $pushes;

    /** The worker ended (FatalGuard): each connection left closes once its response is out, whatever else it sent. */
    public bool $lastResponses = false;

    /** Of those, how many were written whole and closed in order. */
    public int $lastResponsesWritten = 0;

    /** @var \Closure(): void|null called once when draining and the last connection is gone */
    public ?\Closure $onEmpty = null;

    public function __construct(
        private readonly RequestHandler $handler,
        private readonly Limits $limits,
        private readonly WorkerContext $context,
        private readonly ?AccessLog $accessLog,
    ) {
        $this->encoder = new ResponseEncoder();
        $this->sender = new ResponseSender($this->encoder, $context);
        $this->pushes = new PushedStreams($this, $this->encoder, $limits, $context);
    }

    public function add(Connection $connection): void
    {
        $this->connections[$connection->id] = $connection;
    }

    public function forget(Connection $connection): void
    {
        unset($this->connections[$connection->id]);
        $this->settleDrain();
    }

    /** See WorkerContext::retiring(). */
    public function retiring(string $reason): float
    {
        return $this->context->retiring($reason);
    }

    /** While draining, calls the drain callback once the last connection is gone. */
    public function settleDrain(): void
    {
        if ($this->draining && $this->connections === [] && $this->onEmpty !== null) {
            $done = $this->onEmpty;
            $this->onEmpty = null;
            $this->flushLogs();
            $done();
        }
    }

    /** Runs inside the request's Fiber. */
    public function respond(Connection $connection, Request $request): void
    {
        if ($this->inFlight >= $this->limits->concurrency) {
            $response = ErrorResponse::plain(503, '', ['Retry-After' => '1']);
            $failure = null;
        } else {
            [$response, $failure] = $this->handle($connection, $request);
        }
        if ($failure !== null) {
            $this->logFailure($request, $failure);
        }
        $head = $request->head();
        $keepAlive = $head->keepAlive && !$this->draining && $connection->mayKeepAlive()
            && $connection->served + 1 < $this->limits->keepAliveRequests;
        $this->send($connection, $request, $response, $keepAlive);
    }

    /**
     * The handler's response, or a 500 and what it threw. This and send() hold respond()'s finally blocks:
     * PHP's tracing JIT compiles no trace through a finally block, so respond() itself stays compiled.
     *
     * @return array{Response, ?\Throwable}
     */
    private function handle(Connection $connection, Request $request): array
    {
        $this->inFlight++;
        $this->serving[$connection->id] = $request;
        try {
            $response = $this->handler->handle($request);
            return [$response, $response->failure()];
        } catch (\Throwable $failure) {
            return [ErrorResponse::plain(500), $failure];
        } finally {
            $this->inFlight--;
            unset($this->serving[$connection->id]);
        }
    }

    private function send(Connection $connection, Request $request, Response $response, bool $keepAlive): void
    {
        $body = $response->body();
        if ($body instanceof EventStream) {
            $this->push($connection, $request, $response, $body, $keepAlive);
            return;
        }
        $sent = 0;
        $status = $response->status();
        try {
            [$keepAlive, $sent, $status] = $this->sender->send($connection, $request, $response, $keepAlive);
        } catch (\Throwable $e) {
            // Whatever reached the wire cannot be trusted to be a whole response: end the connection.
            $keepAlive = false;
            $head = $request->head();
            $this->context->log('error', 'Sending the response to ' . $head->method . ' ' . $head->target
                . ' failed: ' . $e::class . ': ' . $e->getMessage());
        } finally {
            $request->releaseBody();
            $this->context->requestServed();
            $this->logAccess($connection, $request, $status, $sent);
            $connection->responded($keepAlive);
        }
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
                $connection->responded(false);
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
        $this->logAccess($connection, $request, $status, $sent);
        if ($connectionOpen) {
            $connection->responded($keepAlive);
        }
    }

    /** @return list<Request> the requests whose handlers are running (suspended ones included) */
    public function running(): array
    {
        return array_values($this->serving);
    }

    public function serving(Connection $connection): ?Request
    {
        return $this->serving[$connection->id] ?? null;
    }

    /** A request answered while the process ends (FatalGuard): counted and logged like any other. */
    public function servedAtShutdown(Connection $connection, Request $request, int $status, int $sent): void
    {
        $this->context->requestServed(); // also tells the supervisor this worker was healthy
        $this->logAccess($connection, $request, $status, $sent);
    }

    public function logAccess(Connection $connection, Request $request, int $status, int $sent): void
    {
        $head = $request->head();
        $this->accessLog?->record(
            $connection->remoteAddress,
            $head->method . ' ' . $head->target . ' HTTP/' . $head->version,
            $status,
            $sent,
            $request->header('referer') ?? '',
            $request->header('user-agent') ?? '',
        );
    }

    private function logFailure(Request $request, \Throwable $failure): void
    {
        $message = 'Uncaught ' . $failure::class . ' while handling ' . $request->method() . ' ' . $request->target()
            . ': ' . $failure->getMessage() . ' at ' . $failure->getFile() . ':' . $failure->getLine();
        for ($previous = $failure->getPrevious(); $previous !== null; $previous = $previous->getPrevious()) {
            $message .= '; caused by ' . $previous::class . ': ' . $previous->getMessage();
        }
        $this->context->log('error', $message);
    }

    /** Answers a request the parser refused, then closes: nothing after it on this connection is read. */
    public function reject(Connection $connection, int $status, string $reason): void
    {
        $response = ErrorResponse::plain($status, $reason);
        $body = $response->body();
        \assert(\is_string($body));
        $connection->write($this->encoder->responseHead($response, \strlen($body), '1.1', false) . $body);
        $this->accessLog?->record($connection->remoteAddress, '-', $status, \strlen($body), '', '');
        $connection->closeAfterFlush();
    }

    public function log(string $level, string $message): void
    {
        $this->context->log($level, $message);
    }

    public function flushLogs(): void
    {
        $this->accessLog?->flush();
    }
}
