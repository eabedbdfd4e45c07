<?php

declare(strict_types=1);

namespace Kiln\Isolation\Cgi;

use Kiln\Loop\CancelledException;
use Kiln\Loop\Deferred;
use Kiln\Loop\Process;
use Kiln\Loop\ProcessException;
use Kiln\Loop\TimeoutCancellation;

/**
 * Starts CGI processes (RFC 3875 §4, §6) with a bound on how many run at once. Knows nothing of HTTP:
 * the caller gives the command, the meta-variable environment and the request body.
 *
 * - A slot is held from start() until the process has exited and been reaped, so killed or lingering
 *   scripts cannot be outrun by new ones. When all $maxConcurrent slots are held, start() waits up to
 *   $queueWait seconds for one (at most $maxConcurrent callers wait), then throws CgiBusyException: a
 *   script that is just exiting does not turn the next request into a 503.
 * - Each process runs in its own process group (through setsid(1) when it is installed), so a timeout kills
 *   whatever the script started too. Without setsid only the script itself is signalled.
 * - $timeout is a limit on the whole run, from start to the end of the output (like max_execution_time):
 *   past it the group gets SIGTERM, then SIGKILL after $killGrace seconds.
 * - The process starts with only stdin, stdout and stderr open (CleanExec), not the worker's sockets.
 */
final class CgiLauncher
{
    private int $running = 0;

    /** @var array<int, Deferred<null>> callers waiting for a slot, by object id, oldest first */
    private array $waiters = [];

    private readonly ?string $setsid;

    public function __construct(
        public readonly int $maxConcurrent = 16,
        public readonly float $timeout = 30.0,
        public readonly float $killGrace = 1.0,
        public readonly int $maxHeaderBytes = CgiResponseParser::DEFAULT_MAX_HEADER_BYTES,
        public readonly float $queueWait = 0.5,
        ?string $setsid = null,
    ) {
        if ($maxConcurrent < 1 || $timeout <= 0 || $killGrace < 0 || $queueWait < 0) {
            throw new \ValueError('CgiLauncher needs maxConcurrent >= 1, timeout > 0, killGrace >= 0 and queueWait >= 0');
        }
        $this->setsid = $setsid ?? self::findSetsid();
    }

    /**
     * Starts $command with exactly $env as its environment, feeds it $stdin (closed after), and returns the
     * running process; read its response with head() then body(). Runs inside a Fiber.
     *
     * @param list<string> $command executed directly (no shell)
     * @param array<string, string> $env
     * @param string|resource $stdin the request body: bytes, or a readable stream read from where it is
     * @param (\Closure(string): void)|null $onStderr called with each chunk the script writes to stderr, then once with '' at its end
     *
     * @throws CgiBusyException|CgiStartException
     */
    public function start(array $command, array $env, ?string $cwd, mixed $stdin = '', ?\Closure $onStderr = null): CgiProcess
    {
        if ($command === []) {
            throw new \ValueError('CgiLauncher::start() needs a command');
        }
        $this->acquire();
        $grouped = $this->setsid !== null;
        try {
            $process = Process::start(CleanExec::wrap($grouped ? [$this->setsid, ...$command] : $command), $cwd, $env);
        } catch (ProcessException $e) {
            $this->release();
            throw new CgiStartException($e->getMessage(), 0, $e);
        }
        $released = false;
        $release = function () use (&$released): void {
            if (!$released) {
                $released = true;
                $this->release();
            }
        };

        return CgiProcess::begin($process, $grouped, $stdin, $onStderr, $release, $this->timeout, $this->killGrace, $this->maxHeaderBytes);
    }

    /** How many processes hold a slot (running, or being killed). */
    public function running(): int
    {
        return $this->running;
    }

    /** @throws CgiBusyException */
    private function acquire(): void
    {
        if ($this->running < $this->maxConcurrent) {
            ++$this->running;

            return;
        }
        if ($this->queueWait <= 0 || \count($this->waiters) >= $this->maxConcurrent) {
            throw new CgiBusyException("All {$this->maxConcurrent} CGI slots are in use");
        }
        /** @var Deferred<null> $turn */
        $turn = new Deferred();
        $id = \spl_object_id($turn);
        $this->waiters[$id] = $turn;
        try {
            $turn->getFuture()->await(new TimeoutCancellation($this->queueWait));
        } catch (CancelledException) {
            unset($this->waiters[$id]);
            if (!$turn->isComplete()) {
                throw new CgiBusyException("All {$this->maxConcurrent} CGI slots are in use");
            }
        }
        // release() handed its slot over: $running already counts it.
    }

    private function release(): void
    {
        foreach ($this->waiters as $id => $turn) {
            unset($this->waiters[$id]);
            if (!$turn->isComplete()) {
                $turn->complete();

                return;
            }
        }
        --$this->running;
    }

    private static function findSetsid(): ?string
    {
        foreach (['/usr/bin/setsid', '/bin/setsid'] as $path) {
            if (\is_executable($path)) {
                return $path;
            }
        }

        return null;
    }
}
