<?php

declare(strict_types=1);

namespace Kiln\Isolation\PhpCgi;

use Kiln\Isolation\FastCgi\FastCgiAddress;
use Kiln\Kiln;
use Kiln\Loop\Loop;
use Kiln\Loop\Suspension;
use Kiln\Server\Metrics\Registry;
use Kiln\Server\SidecarClient;
use Kiln\Server\SidecarHost;
use Kiln\Server\SidecarListener;
use Kiln\Server\SidecarSpec;

/**
 * One worker's slice of php-cgi children (the supervisor runs them: see Kiln\Server\Sidecars), and the
 * requests waiting for one. The slice is this worker's alone, so choosing an idle child needs no locking.
 *
 * - acquire() hands out an idle child at once, else waits in a FIFO queue of at most `queue` requests
 *   for at most `timeLimit` seconds (PoolBusyException: full or too long → 503), or throws PoolUnavailableException (→ 502)
 *   when every child failed to start and the supervisor is backing off.
 * - release() ends the lease. A child that a request had to give up on (timeout, broken exchange:
 *   $reusable false) gets no further request: the supervisor is asked for a fresh one in its place
 *   (SIGKILL) and announces it. A child that served `maxRequests` requests is replaced the same way
 *   (SIGTERM), one child of the slice at a time: children that share the load evenly reach the limit
 *   together, and replacing them together would leave the slice with none for a while. So one that
 *   reaches it while another is being replaced serves on until that one is back.
 * - Before the supervisor is asked, onRetire's callback lets go of the child's socket: php-cgi waits for
 *   the next request on a kept connection in a read() it retries on EINTR, so SIGTERM ends it only once
 *   that connection is closed (measured: still running 0.5 s after SIGTERM; gone 3 ms after the close).
 * - php-cgi's own request limit is off (PHP_FCGI_MAX_REQUESTS=0): it would exit on it and drop the
 *   request it had accepted next, so only Kiln decides when a child goes.
 */
final class PhpCgiPool implements SidecarListener
{
    /** @var array<int, PhpCgiChild> */
    private array $children = [];

    /** @var array<int, Suspension> FIFO */
    private array $waiters = [];

    /** @var array<int, float> Loop::now() + timeLimit of each waiter, in the same order */
    private array $giveUpAt = [];

    private int $nextWaiter = 0;

    /**
     * The one timer for the oldest waiter's time limit, while any waits: not one per waiter, which under
     * load would be made and cancelled for nearly every request.
     */
    private ?string $expiry = null;

    private bool $opened = false;

    /** @var (\Closure(FastCgiAddress): void)|null */
    private ?\Closure $letGo = null;

    private readonly string $name;

    private readonly SidecarHost $host;

    /** @param array<string, string>|null $environment where passEnv values come from; null: this process's */
    public function __construct(
        public readonly PhpCgiOptions $options,
        ?SidecarHost $host = null,
        private readonly ?array $environment = null,
    ) {
        $this->host = $host ?? SidecarClient::current();
        $this->name = 'php-cgi-' . spl_object_id($this);
        for ($index = 0; $index < $options->size; $index++) {
            $this->children[$index] = new PhpCgiChild($index);
        }
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
     * What the supervisor runs: `php-cgi -d opcache.enable=1 [-d NAME=VALUE…] -b {socket}`, allowlisted env only.
     * The NAME=VALUE pairs are --php-ini's, then the JIT's (Kiln::JIT) for what --php-ini leaves unset.
     */
    public function spec(): SidecarSpec
    {
        $command = [$this->options->binary, '-d', 'opcache.enable=1'];
        $ini = $this->options->jit ? $this->options->phpIni + Kiln::JIT : $this->options->phpIni;
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
        // One process per socket (no php-cgi manager), and no php-cgi request limit: Kiln recycles.
        $env['PHP_FCGI_CHILDREN'] = '0';
        $env['PHP_FCGI_MAX_REQUESTS'] = '0';
        return new SidecarSpec($this->name, $command, $env, $this->options->size);
    }

    /** @throws PoolBusyException|PoolUnavailableException */
    public function acquire(): PhpCgiLease
    {
        $this->open();
        if ($this->waiters === [] && ($child = $this->idleChild()) !== null) {
            return $this->lease($child);
        }
        $this->throwIfUnavailable();
        if (\count($this->waiters) >= $this->options->queue) {
            throw new PoolBusyException("All {$this->options->size} php-cgi children are busy and {$this->options->queue} requests wait already (--pool-queue)");
        }
        $suspension = Loop::getSuspension();
        $id = $this->nextWaiter++;
        $this->waiters[$id] = $suspension;
        if ($this->options->timeLimit > 0) {
            $this->giveUpAt[$id] = Loop::now() + $this->options->timeLimit;
            $this->expiry ??= $this->armExpiry();
        }
        try {
            $lease = $suspension->suspend();
        } finally {
            unset($this->waiters[$id], $this->giveUpAt[$id]);
            if ($this->giveUpAt === [] && $this->expiry !== null) {
                Loop::cancel($this->expiry);
                $this->expiry = null;
            }
        }
        \assert($lease instanceof PhpCgiLease);
        return $lease;
    }

    /** A timer for the time limit of the oldest waiter (FIFO: the first to run out), null when none waits. */
    private function armExpiry(): ?string
    {
        $first = array_key_first($this->giveUpAt);
        if ($first === null) {
            return null;
        }
        $timer = Loop::delay(max(0.0, $this->giveUpAt[$first] - Loop::now()), function (): void {
            $this->expiry = null;
            $now = Loop::now();
            foreach ($this->giveUpAt as $id => $at) {
                if ($at > $now) {
                    break;
                }
                $waiter = $this->waiters[$id];
                unset($this->waiters[$id], $this->giveUpAt[$id]);
                $waiter->throw(new PoolBusyException("No php-cgi child came free within {$this->options->timeLimit} s"));
            }
            $this->expiry ??= $this->armExpiry();
        });
        return $timer;
    }

    /** @param bool $reusable false when the request gave up on the child (timeout, broken exchange): it is killed */
    public function release(PhpCgiLease $lease, bool $reusable = true, string $why = ''): void
    {
        if ($lease->released) {
            return;
        }
        $lease->released = true;
        $child = $this->children[$lease->index];
        if ($child->pid !== $lease->pid || $child->state !== ChildState::Busy) {
            return; // that process is gone already (the supervisor said so); its slot moved on
        }
        if (!$reusable) {
            $this->retire($child, true, $why === '' ? 'the request gave up on it' : $why);
        } elseif ($child->served >= $this->options->maxRequests && !$this->replacing()) {
            $this->retire($child, false, "served {$child->served} requests (--pool-max-requests={$this->options->maxRequests})");
        } else {
            $child->state = ChildState::Idle;
            $this->handOut();
        }
    }

    public function sidecarUp(int $index, int $pid, string $socket): void
    {
        $child = $this->children[$index] ?? null;
        if ($child === null) {
            return;
        }
        $child->pid = $pid;
        $child->socket = $socket;
        $child->address = FastCgiAddress::unix($socket);
        $child->served = 0;
        $child->failure = '';
        $child->state = ChildState::Idle;
        $this->handOut();
    }

    public function sidecarDown(int $index, float $retryIn, string $reason): void
    {
        $child = $this->children[$index] ?? null;
        if ($child === null) {
            return;
        }
        $child->pid = null;
        if ($child->address !== null && $this->letGo !== null) {
            ($this->letGo)($child->address);
        }
        $child->socket = '';
        $child->address = null;
        if ($retryIn > 0) {
            $child->state = ChildState::Failed;
            $child->failure = $reason;
            $child->retryAt = Loop::now() + $retryIn;
        } else {
            $child->state = ChildState::Starting;
        }
        if ($this->unavailable() !== null) {
            foreach ($this->waiters as $id => $waiter) {
                unset($this->waiters[$id], $this->giveUpAt[$id]);
                $waiter->throw(new PoolUnavailableException((string) $this->unavailable()));
            }
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

    /** @return array<string, int> children by state, and requests waiting (for status and tests) */
    public function stats(): array
    {
        $stats = ['waiting' => \count($this->waiters)];
        foreach (ChildState::cases() as $state) {
            $stats[$state->value] = 0;
        }
        foreach ($this->children as $child) {
            $stats[$child->state->value]++;
        }
        return $stats;
    }

    private function retire(PhpCgiChild $child, bool $kill, string $why): void
    {
        $child->state = ChildState::Retiring;
        $pid = $child->pid;
        \assert($pid !== null);
        $child->pid = null;
        if ($child->address !== null && $this->letGo !== null) {
            ($this->letGo)($child->address);
        }
        $this->host->replace($this->name, $child->index, $pid, $kill, $why);
    }

    /** Whether a child of the slice is being replaced now (asked for, not announced yet). */
    private function replacing(): bool
    {
        foreach ($this->children as $child) {
            if ($child->state === ChildState::Retiring || $child->state === ChildState::Starting) {
                return true;
            }
        }
        return false;
    }

    private function idleChild(): ?PhpCgiChild
    {
        foreach ($this->children as $child) {
            if ($child->state === ChildState::Idle) {
                return $child;
            }
        }
        return null;
    }

    private function lease(PhpCgiChild $child): PhpCgiLease
    {
        \assert($child->pid !== null && $child->address !== null);
        $child->state = ChildState::Busy;
        $child->served++;
        return new PhpCgiLease($child->index, $child->pid, $child->socket, $child->address);
    }

    /** Gives idle children to the longest waiting requests. */
    private function handOut(): void
    {
        while ($this->waiters !== [] && ($child = $this->idleChild()) !== null) {
            $id = array_key_first($this->waiters);
            $waiter = $this->waiters[$id];
            unset($this->waiters[$id], $this->giveUpAt[$id]);
            $waiter->resume($this->lease($child));
        }
    }

    /** @throws PoolUnavailableException */
    private function throwIfUnavailable(): void
    {
        $why = $this->unavailable();
        if ($why !== null) {
            throw new PoolUnavailableException($why);
        }
    }

    /** Why no child can run (every one failed and is backing off), null when one runs or is starting. */
    private function unavailable(): ?string
    {
        $failure = null;
        foreach ($this->children as $child) {
            if ($child->state !== ChildState::Failed) {
                return null;
            }
            $failure = $child->failure;
        }
        return 'php-cgi cannot run: ' . $failure;
    }
}
