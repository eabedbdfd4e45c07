<?php

declare(strict_types=1);

namespace Kiln\Http\Internal;

use Kiln\Http\AccessLog;
use Kiln\Http\Limits;
use Kiln\Http\Request;
use Kiln\Http\RequestHandler;
use Kiln\Http\Response;
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

    public readonly ResponseEncoder $encoder;

    private readonly ResponseSender $sender;

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
        try {
            $response = $this->handler->handle($request);
        } catch (\Throwable $e) {
            $this->context->log('error', 'Uncaught ' . $e::class . ' while handling ' . $request->method() . ' '
                . $request->target() . ': ' . $e->getMessage() . ' at ' . $e->getFile() . ':' . $e->getLine());
            $response = self::plain(500);
        }
        $head = $request->head();
        $keepAlive = $head->keepAlive && !$this->draining && !$connection->peerClosed
            && $connection->served + 1 < $this->limits->keepAliveRequests;
        $sent = 0;
        try {
            [$keepAlive, $sent] = $this->sender->send($connection, $request, $response, $keepAlive);
        } finally {
            $request->releaseBody();
            $this->context->requestServed();
            $this->accessLog?->record(
                $connection->remoteAddress,
                $head->method . ' ' . $head->target . ' HTTP/' . $head->version,
                $response->status(),
                $sent,
                $request->header('referer') ?? '',
                $request->header('user-agent') ?? '',
            );
            $connection->responded($keepAlive);
        }
    }

    /** Answers a request the parser refused, then closes: nothing after it on this connection is read. */
    public function reject(Connection $connection, int $status, string $reason): void
    {
        $body = $status . ' ' . ResponseEncoder::reason($status) . ': ' . $reason . "\n";
        $connection->write($this->encoder->head(
            $status,
            ['Content-Type' => 'text/plain; charset=utf-8'],
            \strlen($body),
            '1.1',
            false,
        ) . $body);
        $this->accessLog?->record($connection->remoteAddress, '-', $status, \strlen($body), '', '');
        $connection->closeAfterFlush();
    }

    public static function plain(int $status): Response
    {
        return Response::text($status . ' ' . ResponseEncoder::reason($status) . "\n", $status);
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
