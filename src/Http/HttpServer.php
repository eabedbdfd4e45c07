<?php

declare(strict_types=1);

namespace Kiln\Http;

use Kiln\Http\Internal\ConnectionState;
use Kiln\Http\Internal\CoreState;
use Kiln\Http\Internal\FatalGuard;
use Kiln\Http\Internal\HttpCore;
use Kiln\Http\WebSocket\WebSocketServer;
use Kiln\Loop\Driver\SelectDriver;
use Kiln\Loop\Loop;
use Kiln\Server\AcceptBalance;
use Kiln\Server\InFlight;
use Kiln\Server\Service;
use Kiln\Server\WorkerContext;

/**
 * The HTTP/1.1 service a worker runs: accepts connections on the listeners, enforces the connection cap
 * and every timeout from one housekeeping tick, and drains or stops on the worker's word.
 */
final class HttpServer implements Service, InFlight
{
    private ?HttpCore $core = null;

    /** @var list<string> */
    private array $acceptWatchers = [];

    private ?string $tick = null;

    private int $cap = 0;

    /** @var array<int, array{string, int}> local address and port by listener resource id */
    private array $localNames = [];

    private float $shedLoggedAt = -INF;

    private int $shed = 0;

    /** The 503 a connection past the cap gets, made once at start() (no Response exists then). */
    private string $shedResponse = '';

    /** @var list<resource> */
    private array $listeners = [];

    private ?AcceptBalance $balance = null;

    private int $slot = 0;

    /** Until when this worker takes every connection it sees: a recent yield found nobody else taking. */
    private float $yieldOffUntil = 0.0;

    /** Yields in a row that no sibling took up. */
    private int $unansweredYields = 0;

    /** How long a worker that yields stops watching the listeners: time enough for a sibling to accept. */
    private const YIELD_PAUSE = 0.002;

    /** How long a worker stops yielding after a yield that no sibling took up (it may be busy in a script). */
    private const YIELD_OFF = 0.1;

    /**
     * One at a time: how long a new connection may take to show its request before the worker takes another
     * (seconds), and how often a worker that holds back looks whether it is free again.
     */
    private const FRESH = 0.25;
    private const HOLD_POLL = 0.005;

    /** Scripts a worker runs (and answers) taking one connection at a time, before it takes them as the others do. */
    private const SERIAL_ANSWERS = 16;

    /** How long connections on their way hold nothing back after one stayed quiet past FRESH (seconds). */
    private const QUIET_PAUSE = 1.0;

    /** Until when connections on their way do not hold accepting back (one stayed quiet: isFree()). */
    private float $quietUntil = 0.0;

    /**
     * Takes a connection only when it has nothing else to serve (start(): one at a time and a shared listener), until
     * it has answered SERIAL_ANSWERS requests that ran a script (static files do not count): a worker that a script
     * ends (after each request, for some apps) never gets that far; one that lives on then takes connections as the
     * others do (oneAtATime()).
     */
    private bool $serial = false;

    /** Not watching the listeners until isFree() (holdBack()). */
    private bool $holding = false;

    private readonly WebSocketServer $webSockets;

    /**
     * @param ?WebSocketServer $webSockets the one the handler's WebSocket routes upgrade through (drained and stopped with the server)
     * @param float $slowRequest a request taking longer (seconds, dispatch to end of response) is logged as a warning; 0: off
     * @param bool $oneAtATime the handler serves one request at a time, blocking the loop (the sequential tier): on a
     *        shared listener the worker then takes a connection only when it has nothing else to serve, as a php-fpm
     *        child does, so no client waits behind a script on this worker, or is refused if the script ends it,
     *        while a sibling or its replacement could serve it
     */
    public function __construct(
        private readonly RequestHandler $handler,
        private readonly Limits $limits,
        private readonly ?AccessLog $accessLog = null,
        ?WebSocketServer $webSockets = null,
        private readonly float $slowRequest = 0.0,
        private readonly bool $oneAtATime = false,
    ) {
        $this->webSockets = $webSockets ?? new WebSocketServer($limits);
    }

    public function start(array $listeners, WorkerContext $context): void
    {
        if ($this->core !== null) {
            throw new \Error('HttpServer::start() was already called');
        }
        if (\function_exists('pcntl_signal')) {
            pcntl_signal(SIGPIPE, SIG_IGN);
        }
        $this->serial = $this->oneAtATime && $context->sharesListeners(); // reuseport: what this worker leaves waits in its own queue
        // One at a time, static files leave the worker's first answers to the scripts (oneAtATime()).
        $this->core = new HttpCore($this->handler, $this->limits, $context, $this->accessLog, $this->slowRequest, $this->serial);
        // The WebSocket connections are long-lived connections of the core: a drain waits for them.
        $this->webSockets->start($context, $this->core->writeBatch, $this->core->addLongLived(...));
        FatalGuard::install($this->core, $this->retire(...), $context->sharesListeners());
        $this->shedResponse = ErrorResponse::encoded($this->core->encoder, 503, ['Retry-After' => '1']);
        $this->cap = min($this->limits->connections, Loop::get()->capacity());
        $this->listeners = $listeners;
        $this->balance = $context->acceptBalance();
        if ($this->balance !== null) {
            $this->slot = $context->workerId();
            $this->balance->join($this->slot);
        }
        foreach ($listeners as $listener) {
            stream_set_blocking($listener, false);
        }
        $this->watchListeners();
        $this->tick = Loop::repeat($this->tickInterval(), $this->housekeeping(...));
        Loop::unreference($this->tick);
    }

    private function watchListeners(): void
    {
        foreach ($this->listeners as $listener) {
            $this->acceptWatchers[] = Loop::onReadable($listener, function (string $watcher, mixed $listener): void {
                $this->accept($listener, true);
            });
        }
    }

    /**
     * @param resource $listener
     * @param bool $mayYield whether a busier worker than its siblings leaves the connection to them
     * @param int $batch at most this many: bounded, so one listener cannot starve the rest
     * @return bool whether connections may be left in the queue
     */
    private function accept(mixed $listener, bool $mayYield = false, int $batch = 32): bool
    {
        $core = $this->core;
        \assert($core !== null);
        for ($i = 0; $i < $batch; $i++) {
            if ($mayYield && $this->oneAtATime() && !$this->isFree()) {
                $this->holdBack();
                return true;
            }
            if ($mayYield && $this->balance !== null && Loop::now() >= $this->yieldOffUntil
                && $this->balance->shouldYield($this->slot)) {
                $this->yieldToSiblings();
                return true;
            }
            $socket = @stream_socket_accept($listener, 0, $peer);
            if ($socket === false) {
                return false;
            }
            // WebSocket connections left the HTTP core at their upgrade but still hold a descriptor and a watcher.
            if ($core->connectionCount() + $this->webSockets->count() >= $this->cap) {
                $this->shedConnection($socket);
                continue;
            }
            $this->balance?->accepted($this->slot);
            stream_set_blocking($socket, false);
            stream_set_read_buffer($socket, 0);
            stream_set_write_buffer($socket, 0);
            [$address, $port] = self::endpoint(\is_string($peer) ? $peer : '');
            // SERVER_ADDR / SERVER_PORT: the listener's own name, unless it listens on every address.
            $local = $this->localNames[(int) $listener] ??= self::endpoint((string) stream_socket_get_name($listener, false));
            if ($local[0] === '0.0.0.0' || $local[0] === '::') {
                $local = self::endpoint((string) stream_socket_get_name($socket, false));
            }
            $core->open($socket, $address, $port, $local[0], $local[1]);
        }
        return true;
    }

    /**
     * Stops watching the listeners for a moment so a less busy sibling takes what is queued. When no
     * sibling accepted anything meanwhile, this worker takes one connection (a sibling may have been
     * yielding at the same moment); after three such pauses in a row the siblings are busy (running
     * scripts, say): it takes everything queued and stops yielding for a while.
     */
    private function yieldToSiblings(): void
    {
        $balance = $this->balance;
        \assert($balance !== null);
        $this->stopAccepting();
        $siblingsBefore = $balance->siblingsLastAccepted($this->slot);
        $this->acceptWatchers[] = Loop::delay(self::YIELD_PAUSE, function () use ($siblingsBefore): void {
            $this->acceptWatchers = [];
            if ($this->balance === null || $this->balance->siblingsLastAccepted($this->slot) !== $siblingsBefore) {
                $this->unansweredYields = 0;
            } elseif (++$this->unansweredYields < 3) {
                foreach ($this->oneAtATime() && !$this->isFree() ? [] : $this->listeners as $listener) {
                    $this->accept($listener, false, 1);
                }
            } else {
                $this->unansweredYields = 0;
                $this->yieldOffUntil = Loop::now() + self::YIELD_OFF;
            }
            $this->watchListeners();
        });
    }

    private function oneAtATime(): bool
    {
        return $this->serial && $this->core !== null && $this->core->answered() < self::SERIAL_ANSWERS;
    }

    /**
     * Nothing to serve: no handler running for an open connection, no request queued or pipelined, and none on its
     * way: in the socket of a new connection, or due less than FRESH after a new connection was taken (its whole
     * first request), or after a kept one's next head or body began to arrive (a client sends its request right
     * after connecting, and most requests in one piece). One on its way for longer (a client that connects ahead, or
     * sends slowly, on purpose or not) holds nothing back: while one is open, and for QUIET_PAUSE after, neither do
     * the others, so such connections cannot stop the worker taking new ones. Nor does one being answered or closing:
     * a client that reads slowly holds nothing either.
     */
    private function isFree(): bool
    {
        \assert($this->core !== null);
        $now = Loop::now();
        $young = false;
        foreach ($this->core->connections() as $connection) {
            if ($connection->isQueued() || $this->core->serving($connection) !== null) {
                return false;
            }
            if ($connection->state !== ConnectionState::Reading) {
                continue;
            }
            // A new connection has one wait for its whole first request; a kept one, from its next head or body.
            if ($connection->isReadingBody()) {
                $since = $connection->served === 0 ? $connection->openedAt : $connection->bodyStartedAt;
            } elseif ($connection->isWaitingForHead()) { // part of a head came (what is buffered is that part)
                $since = $connection->served === 0 ? $connection->openedAt : $connection->headStartedAt;
            } elseif ($connection->hasBufferedRequest()) {
                return false; // pipelined: parsed on the next tick (Connection::responded())
            } elseif ($connection->served === 0 && $connection->awaitsRequest()) {
                if ((string) @stream_socket_recvfrom($connection->socket, 1, STREAM_PEEK) !== '') {
                    return false; // its request is here, not read yet (a busy machine may run this first)
                }
                $since = $connection->openedAt;
            } else {
                continue;
            }
            if ($now - $since >= self::FRESH) {
                $this->quietUntil = $now + self::QUIET_PAUSE; // every connection is looked at, for this
            } else {
                $young = true;
            }
        }
        return !$young || $now < $this->quietUntil;
    }

    /**
     * Stops watching the listeners until the worker is free again, looked at every HOLD_POLL: what is queued waits for
     * whoever is free first.
     */
    private function holdBack(): void
    {
        $this->stopAccepting();
        $this->holding = true;
        $this->acceptWatchers[] = Loop::repeat(self::HOLD_POLL, function (): void {
            $this->takeAgainIfFree();
        });
    }

    private function takeAgainIfFree(): void
    {
        if ($this->holding && (!$this->oneAtATime() || $this->isFree())) {
            $this->stopAccepting();
            $this->watchListeners();
        }
    }

    /** @return array{string, int} address (IPv6 without brackets) and port of `host:port` */
    private static function endpoint(string $name): array
    {
        $colon = strrpos($name, ':');
        return $colon === false ? [$name, 0] : [trim(substr($name, 0, $colon), '[]'), (int) substr($name, $colon + 1)];
    }

    /**
     * At the cap a connection gets a short 503 at once rather than waiting unseen in the kernel's queue.
     *
     * @param resource $socket
     */
    private function shedConnection(mixed $socket): void
    {
        \assert($this->core !== null);
        $this->shed++;
        $this->core->shed();
        // The Date of now, as every other response has: the encoder keeps the current second's line.
        @fwrite($socket, $this->core->encoder->dated($this->shedResponse));
        @fclose($socket);
        $now = Loop::now();
        if ($now - $this->shedLoggedAt >= 10.0) {
            $this->shedLoggedAt = $now;
            $driver = Loop::get();
            $capacity = $driver->capacity();
            $this->core->log('warning', "connection cap of {$this->cap} per worker reached: shed {$this->shed} "
                . 'connection(s) with 503; raise --connections' . ($this->cap < $capacity ? " (this loop driver watches up to $capacity)"
                : " (this loop driver watches no more than $capacity here: " . ($driver instanceof SelectDriver ? 'the epoll driver, from php-ffi, watches more)' : 'raise the open-files limit for more)')));
            $this->shed = 0;
        }
    }

    private function tickInterval(): float
    {
        $shortest = min(
            $this->limits->headerTimeout,
            $this->limits->bodyTimeout,
            $this->limits->keepAliveTimeout,
            $this->limits->writeTimeout,
        );
        return max(0.05, min(1.0, $shortest / 4));
    }

    /** Every timeout is checked here, so a request costs no timer of its own. */
    private function housekeeping(): void
    {
        $core = $this->core;
        \assert($core !== null);
        $now = Loop::now();
        $limits = $this->limits;
        foreach ($core->connections() as $connection) {
            if ($connection->output->pending() > 0) {
                if (!$connection->output->isBatched() && $now - $connection->output->lastWriteAt > $limits->writeTimeout) {
                    $connection->close();
                }
                continue;
            }
            if ($connection->isReadingBody()) {
                if ($now - $connection->lastBodyAt > $limits->bodyTimeout) {
                    $core->reject($connection, 408, 'request body not received in time');
                }
            } elseif ($connection->isWaitingForHead()) {
                if ($now - $connection->headStartedAt > $limits->headerTimeout) {
                    $core->reject($connection, 408, 'request header not received in time');
                }
            } elseif ($connection->isIdle() && $now - $connection->lastActivityAt > $limits->keepAliveTimeout) {
                // (a drain closes its idle connections sooner: HttpCore::startDraining())
                $connection->close();
            }
        }
        $core->flushLogs();
        $core->reportCounts(); // kiln status: connections and requests in flight
    }

    public function inFlight(): array
    {
        $running = [];
        foreach ($this->core?->running() ?? [] as $request) {
            $running[] = $request->method() . ' ' . $request->target();
        }
        return $running;
    }

    public function drain(\Closure $done): void
    {
        $core = $this->core;
        if ($core === null || $core->state() === CoreState::Stopped) {
            $done();
            return;
        }
        if (!$core->state()->serves()) {
            return; // draining already, or finishing as the process ends on its own: that ends the worker
        }
        // Connections the kernel completed already have clients waiting (with reuseport, nobody else would
        // take them): accept them too; each is read at once by the drain and served if its request is there.
        // One connection at a time: what is queued is left to the siblings and the replacement, which take it when free.
        foreach ($this->oneAtATime() ? [] : $this->listeners as $listener) {
            $batches = 0;
            while ($batches++ < 32 && $this->accept($listener)) {
                // until the queue is empty
            }
        }
        $this->stopAccepting();
        $this->leaveBalance();
        // Idle connections, kept and fresh, get a grace: a client may be sending its request on one now.
        $core->startDraining($done, min(1.0, $this->limits->keepAliveTimeout));
    }

    public function windDown(): void
    {
        if ($this->core?->state() === CoreState::Serving) {
            $this->core->windDown();
        }
    }

    public function stop(): void
    {
        $this->stopAccepting();
        $this->leaveBalance();
        if ($this->tick !== null) {
            Loop::cancel($this->tick);
            $this->tick = null;
        }
        if ($this->core !== null && $this->core->state() !== CoreState::Stopped) {
            $this->core->stop(); // the responses of this loop turn still leave; WebSocket connections close too
        }
    }

    private function stopAccepting(): void
    {
        foreach ($this->acceptWatchers as $watcher) {
            Loop::cancel($watcher);
        }
        $this->acceptWatchers = [];
        $this->holding = false;
    }

    /** The worker ends on its own (FatalGuard): it accepts nothing more, not even in a drain. */
    private function retire(): void
    {
        $this->stopAccepting();
        $this->leaveBalance();
        $this->listeners = [];
    }

    /** Leaves the balance for good: siblings stop yielding to a worker that no longer accepts. */
    private function leaveBalance(): void
    {
        $this->balance?->withdraw($this->slot);
        $this->balance = null;

    }
}
