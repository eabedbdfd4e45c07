<?php

declare(strict_types=1);

namespace Kiln\Isolation\PhpCgi;

use Kiln\Isolation\FastCgi\FastCgiAddress;
use Kiln\Isolation\FastCgi\RecordEncoder;
use Kiln\Kiln;
use Kiln\Loop\Fifo;
use Kiln\Loop\Loop;
use Kiln\Loop\Suspension;
use Kiln\Server\Metrics\Registry;
use Kiln\Server\SidecarClient;
use Kiln\Server\SidecarHost;
use Kiln\Server\SidecarListener;
use Kiln\Server\SidecarSpec;

/**
 * The isolated tier's php-cgi pool as one worker uses it: one php-cgi parent for the whole server, run by
 * the supervisor (a shared sidecar set of one member, see Kiln\Server\Sidecars), with `size` children of
 * its own (PHP_FCGI_CHILDREN) that share one opcache, one JIT buffer and one APCu segment, all listening on
 * the parent's one unix socket. Why: docs/design/018-shared-memory-isolated-pool.md.
 *
 * - acquire() hands out a lease at once while fewer than `size` requests of this worker are in flight to
 *   the pool, else waits in a FIFO queue of at most `queue` requests for at most `timeLimit` seconds
 *   (PoolBusyException: full or too long → 503), or throws PoolUnavailableException (→ 502) when the
 *   parent failed to start and the supervisor is backing off. Several workers may together send more
 *   than `size`: the extra connections wait in the socket's listen backlog (the time limit bounds them).
 * - A connection is kept only from one request to the next of this worker that already waits (PhpCgiClient,
 *   onIdle()): when a lease ends and no waiting request takes its place, the idle connections are closed,
 *   so no kept connection holds a child that another worker's request needs. A child that leaves (its PHP_FCGI_MAX_REQUESTS
 *   reached, or killed) is replaced by the parent with a fresh one. Recycling is php-cgi's: `maxRequests`
 *   is PHP_FCGI_MAX_REQUESTS.
 * - A new parent (the supervisor replaced one that died) is used for the next requests; those in flight
 *   to the old one end on their own connections.
 */
final class PhpCgiPool implements SidecarListener
{
    /** @var Fifo<array{Suspension, float}> each waiting request and when it gives up (Loop::now() + timeLimit, INF for never) */
    private readonly Fifo $waiters;

    /**
     * The one timer for the oldest waiter's time limit, while any waits: not one per waiter, which under
     * load would be made and cancelled for nearly every request.
     */
    private ?string $expiry = null;

    private bool $opened = false;

    /** @var (\Closure(FastCgiAddress): void)|null */
    private ?\Closure $letGo = null;

    /** @var (\Closure(): void)|null */
    private ?\Closure $onIdle = null;

    /** The set's name, the same in every worker for the same settings (so they share one parent). */
    public readonly string $name;

    private readonly SidecarHost $host;

    /** The parent: Starting until the supervisor says it listens, Idle while it does, Failed while backing off. */
    private ChildState $state = ChildState::Starting;

    private ?int $pid = null;

    private string $socket = '';

    private ?FastCgiAddress $address = null;

    private string $failure = '';

    /** This worker's requests in flight to the pool. */
    private int $inFlight = 0;

    /** @param array<string, string>|null $environment where passEnv values come from; null: this process's */
    public function __construct(
        public readonly PhpCgiOptions $options,
        ?SidecarHost $host = null,
        private readonly ?array $environment = null,
    ) {
        $this->host = $host ?? SidecarClient::current();
        $this->waiters = new Fifo();
        [$command, $env] = $this->commandAndEnvironment();
        $settings = [$command, $env, $options->queue, $options->timeLimit, $options->batch];
        $this->name = 'php-cgi-' . substr(hash('sha256', json_encode($settings, JSON_THROW_ON_ERROR)), 0, 16);
    }

    /** Asks the supervisor for the children (once; acquire() does it too). */
    public function open(): void
    {
        if (!$this->opened) {
            $this->opened = true;
            $this->host->open($this->spec(), $this);
            $this->measure(Registry::current());
        }
    }

    /**
     * @param \Closure(FastCgiAddress): void $letGo closes what this worker holds open to a child's socket;
     *                                             called before the child is replaced, and once it is gone. MUST NOT throw.
     */
    public function onRetire(\Closure $letGo): void
    {
        $this->letGo = $letGo;
    }

    /**
     * @param \Closure(): void $closeIdle called when a lease ends and no waiting request of this worker takes
     *                                    its place: what is kept open for the next one can go. MUST NOT throw.
     */
    public function onIdle(\Closure $closeIdle): void
    {
        $this->onIdle = $closeIdle;
    }

    /**
     * What the supervisor runs, once for the server: `php-cgi -d opcache.enable=1 [-d NAME=VALUE…] -b {socket}`, allowlisted env only.
     * The NAME=VALUE pairs are --php-ini's, then the JIT's (Kiln::JIT) and max_execution_time (--time-limit,
     * rounded up, plus one second) for what --php-ini leaves unset.
     */
    public function spec(): SidecarSpec
    {
        [$command, $env] = $this->commandAndEnvironment();
        // The supervisor asks the parent's children, now and then, for a FastCGI management value (answered
        // without running a script): a parent that lives but whose children take no connection is replaced.
        // A child may be busy with a script until the worker's time limit, then a second more (PHP's own), and a
        // probe may wait behind a few such connections: twice the limit, at least 10 s. No limit, no probe:
        // a script may then rightly hold every child for as long as it runs.
        $timeout = $this->options->timeLimit > 0 ? max(10.0, 2 * $this->options->timeLimit) : 0.0;
        return new SidecarSpec(
            $this->name,
            $command,
            $env,
            1,
            shared: true,
            probe: $timeout > 0 ? RecordEncoder::getValues(['FCGI_MPXS_CONNS']) : '',
            probeTimeout: $timeout,
            batch: $this->options->batch,
        );
    }

    /** @return array{non-empty-list<string>, array<string, string>} */
    private function commandAndEnvironment(): array
    {
        $command = [$this->options->binary, '-d', 'opcache.enable=1'];
        $ini = $this->options->jit ? $this->options->phpIni + Kiln::JIT : $this->options->phpIni;
        // The worker cannot tell which child holds a request it gave up on (504), so PHP itself ends a script
        // that spins past the time limit (max_execution_time counts CPU time), and the child takes the next.
        // A second later than the worker's limit, never at it: CPU time runs no faster than the wall clock, so
        // the worker's 504 comes first. At the same limit they raced, and PHP's fatal error (a 500) won when the
        // worker woke late on a loaded machine.
        if ($this->options->timeLimit > 0 && !isset($ini['max_execution_time'])) {
            $ini['max_execution_time'] = (string) ((int) ceil($this->options->timeLimit) + 1);
        }
        foreach ($ini as $name => $value) {
            $command[] = '-d';
            $command[] = preg_match('~^[A-Za-z0-9_./:,+\-]*$~', $value) === 1 ? "$name=$value" : "$name=\"$value\"";
        }
        array_push($command, '-b', SidecarSpec::SOCKET);
        $environment = $this->environment ?? getenv();
        $env = [];
        foreach ($this->options->passEnv as $variable) {
            if (isset($environment[$variable])) {
                $env[$variable] = $environment[$variable];
            }
        }
        // One parent in php-cgi's manager mode with `size` children, which it replaces as they reach
        // their request limit or die.
        $env['PHP_FCGI_CHILDREN'] = (string) $this->options->size;
        $env['PHP_FCGI_MAX_REQUESTS'] = (string) $this->options->maxRequests;
        return [$command, $env];
    }

    /** @throws PoolBusyException|PoolUnavailableException */
    public function acquire(): PhpCgiLease
    {
        if (!$this->opened) {
            $this->open();
        }
        if ($this->waiters->isEmpty() && $this->free()) {
            return $this->lease();
        }
        $this->throwIfUnavailable();
        if ($this->waiters->count() >= $this->options->queue) {
            throw new PoolBusyException("All {$this->options->size} php-cgi children are busy with this worker's requests and {$this->options->queue} requests wait already (--pool-queue)");
        }
        return $this->await();
    }

    /**
     * Waits in the queue for a lease. The waiter is taken out however the wait ends, written out after the catch
     * rather than in a finally: the JIT traces no finally, and a trace runs from acquire()'s callers into this wait
     * (docs/design/010-no-finally-on-the-hot-path.md). A Fiber destroyed here would skip it, but it cannot be:
     * $this->waiters holds it for as long as this pool lives.
     */
    private function await(): PhpCgiLease
    {
        $suspension = Loop::getSuspension();
        $limit = $this->options->timeLimit;
        $id = $this->waiters->push([$suspension, $limit > 0 ? Loop::now() + $limit : \INF]);
        if ($limit > 0) {
            $this->expiry ??= $this->armExpiry();
        }
        try {
            $lease = $suspension->suspend();
        } catch (\Throwable $error) {
            $this->leaveQueue($id);
            throw $error;
        }
        $this->leaveQueue($id);
        \assert($lease instanceof PhpCgiLease);
        return $lease;
    }

    private function leaveQueue(int $id): void
    {
        $this->waiters->remove($id);
        if ($this->waiters->isEmpty() && $this->expiry !== null) {
            Loop::cancel($this->expiry);
            $this->expiry = null;
        }
    }

    /** A timer for the time limit of the oldest waiter (FIFO: the first to run out), null when none waits. */
    private function armExpiry(): ?string
    {
        $first = $this->waiters->first();
        if ($first === null || $first[1] === \INF) {
            return null;
        }
        $timer = Loop::delay(max(0.0, $first[1] - Loop::now()), function (): void {
            $this->expiry = null;
            $now = Loop::now();
            while (($first = $this->waiters->first()) !== null && $first[1] <= $now) {
                $this->waiters->shift();
                $first[0]->throw(new PoolBusyException("No php-cgi child came free within {$this->options->timeLimit} s"));
            }
            $this->expiry ??= $this->armExpiry();
        });
        return $timer;
    }

    /**
     * Ends the lease. $reusable false (a timeout, a broken exchange) needs nothing more: the request's own
     * connection was closed, and the child behind it is php-cgi's to replace.
     */
    public function release(PhpCgiLease $lease, bool $reusable = true, string $why = ''): void
    {
        if ($lease->released) {
            return;
        }
        $lease->released = true;
        $this->inFlight--;
        if (!$this->handOut() && $this->onIdle !== null) {
            ($this->onIdle)();
        }
    }

    public function sidecarUp(int $index, int $pid, string $socket): void
    {
        if ($index !== 0) {
            return;
        }
        if ($this->address !== null && $this->socket !== $socket && $this->letGo !== null) {
            ($this->letGo)($this->address);
        }
        $this->pid = $pid;
        $this->socket = $socket;
        $this->address = FastCgiAddress::unix($socket);
        $this->failure = '';
        $this->state = ChildState::Idle;
        $this->handOut();
    }

    public function sidecarDown(int $index, float $retryIn, string $reason): void
    {
        if ($index !== 0) {
            return;
        }
        if ($this->address !== null && $this->letGo !== null) {
            ($this->letGo)($this->address);
        }
        $this->pid = null;
        $this->socket = '';
        $this->address = null;
        if ($retryIn > 0) {
            $this->state = ChildState::Failed;
            $this->failure = $reason;
            foreach ($this->waiters->drain() as [$waiter]) {
                $waiter->throw(new PoolUnavailableException('php-cgi cannot run: ' . $reason));
            }
        } else {
            $this->state = ChildState::Starting;
        }
    }

    /**
     * The pool's children by state and its queue, read as the worker's metrics are exported (docs/design/024-metrics.md).
     * A worker has one pool (the isolated tier's); the series are summed over the node's workers.
     */
    private function measure(Registry $metrics): void
    {
        $children = $metrics->gauge('kiln_php_cgi_children', 'php-cgi children of the isolated tier, by state (busy, idle, ...)', ['state']);
        $queued = $metrics->gauge('kiln_php_cgi_queued', 'Requests waiting for a php-cgi child');
        $metrics->sampler(function () use ($children, $queued): void {
            foreach ($this->stats() as $state => $count) {
                $state === 'waiting' ? $queued->set($count) : $children->set($count, $state);
            }
        });
    }

    /** @return array<string, int> this worker's view of the children by state, and requests waiting (for status and tests) */
    public function stats(): array
    {
        $stats = ['waiting' => $this->waiters->count()];
        foreach (ChildState::cases() as $state) {
            $stats[$state->value] = 0;
        }
        if ($this->state === ChildState::Idle) {
            $stats[ChildState::Busy->value] = min($this->inFlight, $this->options->size);
            $stats[ChildState::Idle->value] = $this->options->size - $stats[ChildState::Busy->value];
        } else {
            $stats[$this->state->value] = $this->options->size;
        }
        return $stats;
    }

    /** Whether this worker may send one more request to the pool now. */
    private function free(): bool
    {
        return $this->state === ChildState::Idle && $this->inFlight < $this->options->size;
    }

    private function lease(): PhpCgiLease
    {
        \assert($this->pid !== null && $this->address !== null);
        $this->inFlight++;
        return new PhpCgiLease(0, $this->pid, $this->socket, $this->address);
    }

    /** Gives free places to the longest waiting requests; whether it gave any. */
    private function handOut(): bool
    {
        $given = false;
        while (!$this->waiters->isEmpty() && $this->free()) {
            $first = $this->waiters->shift();
            \assert($first !== null);
            $first[0]->resume($this->lease());
            $given = true;
        }
        return $given;
    }

    /** @throws PoolUnavailableException */
    private function throwIfUnavailable(): void
    {
        if ($this->state === ChildState::Failed) {
            throw new PoolUnavailableException('php-cgi cannot run: ' . $this->failure);
        }
    }
}
