<?php

declare(strict_types=1);

namespace Kiln\Http\Internal;

use Kiln\Http\Limits;
use Kiln\Http\Request;
use Kiln\Http\Response;
use Kiln\Http\Sse\EventEncoder;
use Kiln\Http\Sse\EventStream;
use Kiln\Http\Wire\ResponseEncoder;
use Kiln\Loop\Loop;
use Kiln\Server\WorkerContext;

/**
 * A worker's open event streams: starts one when a handler's response has an EventStream body (the head
 * is written, the handler's Fiber goes back to the pool), sends the heartbeats from one timer that runs
 * only while a stream is open, and finishes each response (access log, the connection's next request).
 *
 * A stream gets its heartbeat once it has been quiet for Limits::$sseHeartbeat seconds. The timer is set for
 * the moment the quietest stream is due, but never sooner than heartbeatSlack() after it last ran, so that
 * streams that fall due one after another share a run: a heartbeat is that much late at most.
 *
 * @internal
 */
final class PushedStreams
{
    /** @var array<int, PushedStream> by object id */
    private array $open = [];

    private ?string $timer = null;

    public function __construct(
        private readonly HttpCore $core,
        public readonly ResponseEncoder $encoder,
        private readonly Limits $limits,
        private readonly WorkerContext $context,
    ) {}

    public function start(Connection $connection, Request $request, Response $response, EventStream $stream, bool $keepAlive): void
    {
        $head = $request->head();
        $status = $response->status();
        $withBody = $head->method !== 'HEAD' && $status >= 200 && $status !== 204 && $status !== 304;
        $chunked = $head->version === '1.1';
        $keepAlive = $keepAlive && $chunked;
        $connection->write($this->encoder->responseHead($response, null, $head->version, $keepAlive, !$withBody));
        $pushed = new PushedStream($this, $connection, $request, $stream, $chunked, $keepAlive, $status, $this->limits->writeBuffer);
        if (!$withBody) {
            // A HEAD request gets the head only; the stream ends without having started.
            $this->finished($pushed, $connection, $request, $status, 0, $keepAlive, true);
            $stream->ended();
            return;
        }
        $connection->output->send(); // the head now, not at the end of the turn: the client waits on it
        $connection->push($pushed);
        $this->open[spl_object_id($pushed)] = $pushed;
        $this->context->count('sse', \count($this->open)); // kiln status
        if ($this->timer === null) {
            $this->armHeartbeat($this->limits->sseHeartbeat); // the streams open earlier are due no later
        }
        $stream->attach($pushed);
        if ($connection->peerClosed || !$this->core->state()->serves()) {
            // The client closed its side already, or the worker is on its way out: what the handler sent and
            // the replay go out, then the stream ends (the client reconnects, to another worker when draining).
            $pushed->end();
        }
    }

    /** Event streams open now (each on a connection of the HTTP core). */
    public function openCount(): int
    {
        return \count($this->open);
    }

    /** @param bool $connectionOpen false when the connection closed under the stream */
    public function finished(PushedStream $pushed, Connection $connection, Request $request, int $status, int $sent, bool $keepAlive, bool $connectionOpen): void
    {
        if (isset($this->open[spl_object_id($pushed)])) {
            unset($this->open[spl_object_id($pushed)]);
            $this->context->count('sse', \count($this->open));
        }
        if ($this->open === [] && $this->timer !== null) {
            Loop::cancel($this->timer);
            $this->timer = null;
        }
        $this->core->pushFinished($connection, $request, $status, $sent, $keepAlive, $connectionOpen);
    }

    public function slowConsumer(Connection $connection, Request $request, int $pending): void
    {
        $this->core->log('warning', "event stream {$request->target()} to {$connection->remoteAddress}: the client "
            . "reads too slowly ($pending bytes queued, over the write buffer limit): disconnected");
    }

    /** How late a heartbeat may be: a tenth of the period, at most a second. */
    private function heartbeatSlack(): float
    {
        return max(0.01, min(1.0, $this->limits->sseHeartbeat / 10));
    }

    private function heartbeat(): void
    {
        $this->timer = null;
        $now = Loop::now();
        $quiet = $this->limits->sseHeartbeat;
        $next = $now + $quiet;
        foreach ($this->open as $pushed) {
            $next = min($next, $pushed->heartbeat($now, $quiet, EventEncoder::HEARTBEAT));
        }
        if ($this->open !== []) {
            $this->armHeartbeat(max($next - $now, $this->heartbeatSlack()));
        }
    }

    private function armHeartbeat(float $seconds): void
    {
        $this->timer = Loop::delay($seconds, $this->heartbeat(...));
        Loop::unreference($this->timer);
    }
}
