<?php

declare(strict_types=1);

namespace Kiln\Isolation\Cgi;

use function Kiln\Loop\async;

use Kiln\Loop\CancelledException;
use Kiln\Loop\Deferred;

use function Kiln\Loop\delay;

use Kiln\Loop\Loop;
use Kiln\Loop\Process;
use Kiln\Loop\StreamException;
use Kiln\Loop\TimeoutCancellation;

/**
 * One running CGI process, from CgiLauncher::start(). The request body is written to its stdin and its
 * stderr read in background Fibers; its stdout is read by the caller: head() once, then body().
 *
 * - head() and body() suspend the calling Fiber; past the time limit they kill the process group and throw
 *   CgiTimeoutException. Malformed output (or none: a script that cannot be executed) kills it too and
 *   throws CgiResponseException.
 * - After the end of stdout the process is reaped in the background (and killed at the time limit if it
 *   keeps running); its CgiLauncher slot is freed once it is gone.
 * - abort() (also called when body()'s generator is destroyed before its end, e.g. the client left) kills
 *   the process group without waiting; close() kills it too if its output has not ended, and waits until
 *   it is reaped. Both are safe to call at any time, more than once.
 */
final class CgiProcess
{
    private readonly CgiResponseStream $stdout;

    private bool $ended = false;

    private bool $aborted = false;

    private ?int $exitCode = null;

    /** @var Deferred<null> completed once the process is reaped and its slot freed */
    private readonly Deferred $gone;

    /** @param \Closure(): void $release frees the launcher slot; idempotent */
    private function __construct(
        private readonly Process $process,
        private readonly bool $grouped,
        private readonly \Closure $release,
        private readonly TimeoutCancellation $deadline,
        private readonly float $killGrace,
        int $maxHeaderBytes,
    ) {
        $this->stdout = new CgiResponseStream(new CgiResponseParser($maxHeaderBytes));
        $this->gone = new Deferred();
    }

    /**
     * @internal CgiLauncher::start() is the way in.
     *
     * @param string|resource $stdin
     * @param (\Closure(string): void)|null $onStderr
     * @param \Closure(): void $release
     */
    public static function begin(Process $process, bool $grouped, mixed $stdin, ?\Closure $onStderr, \Closure $release, float $timeout, float $killGrace, int $maxHeaderBytes): self
    {
        $deadline = new TimeoutCancellation($timeout, "The CGI process ran longer than {$timeout}s");
        $self = new self($process, $grouped, $release, $deadline, $killGrace, $maxHeaderBytes);
        async(static function () use ($process, $stdin, $deadline): void {
            try {
                if (\is_string($stdin)) {
                    if ($stdin !== '') {
                        $process->write($stdin, $deadline);
                    }
                } else {
                    while (!\feof($stdin) && ($chunk = \fread($stdin, 65536)) !== false && $chunk !== '') {
                        $process->write($chunk, $deadline);
                    }
                }
            } catch (StreamException|CancelledException) {
                // The script closed stdin early, or ran out of time: either way nothing more to write.
            } finally {
                $process->closeStdin();
            }
        })->ignore();
        async(static function () use ($process, $onStderr, $deadline): void {
            try {
                while (($chunk = $process->readStderr($deadline)) !== null) {
                    if ($onStderr !== null) {
                        $onStderr($chunk);
                    }
                }
            } catch (StreamException|CancelledException) {
            }
            if ($onStderr !== null) {
                $onStderr(''); // the end: flush a last line without a newline
            }
        })->ignore();

        return $self;
    }

    public function __destruct()
    {
        if (!$this->ended) {
            $this->abort();
        }
    }

    public function pid(): int
    {
        return $this->process->pid();
    }

    /** The exit code once the process has been reaped (128 + signal when killed), else null. */
    public function exitCode(): ?int
    {
        return $this->exitCode;
    }

    /**
     * Waits for the header block of the response.
     *
     * @throws CgiResponseException|CgiTimeoutException
     */
    public function head(): CgiHead
    {
        return $this->stdout->head($this->readStdout(...), $this->abort(...));
    }

    /**
     * The response body as it arrives: the bytes that came with the head, then every later chunk of stdout.
     * Call after head().
     *
     * @return \Generator<int, string>
     *
     * @throws CgiTimeoutException
     */
    public function body(): \Generator
    {
        return $this->stdout->body('CgiProcess', $this->readStdout(...), $this->abort(...), $this->stdoutEnded(...));
    }

    /** Kills the process group (TERM, then KILL after the grace period) in the background. */
    public function abort(): void
    {
        if ($this->aborted) {
            return;
        }
        $this->aborted = true;
        $this->ended = true;
        if (!$this->process->isRunning()) {
            $this->signalGroup(\SIGKILL); // whatever the script left behind
            $this->finish();

            return;
        }
        $this->signalGroup(\SIGTERM);
        $self = $this;
        // Deferred: abort() may run in a destructor or a generator's finally, where Fibers cannot start.
        Loop::defer(static function () use ($self): void {
            async(static function () use ($self): void {
                $self->waitForExit($self->killGrace);
                $self->signalGroup(\SIGKILL);
                $self->waitForExit(\INF);
                $self->finish();
            })->ignore();
        });
    }

    /** Kills the process group unless its output has ended, and waits until the process is reaped. */
    public function close(): void
    {
        if (!$this->ended) {
            $this->abort();
        }
        $this->gone->getFuture()->await();
    }

    /** @throws CgiTimeoutException */
    private function readStdout(): ?string
    {
        try {
            return $this->process->readStdout($this->deadline);
        } catch (CancelledException $e) {
            $this->abort();
            throw new CgiTimeoutException($e->getMessage(), 0, $e);
        } catch (StreamException $e) {
            return null;
        }
    }

    private function stdoutEnded(): void
    {
        $this->ended = true;
        $this->reapInBackground();
    }

    /** After the end of stdout: waits for the exit, killing the group at the time limit. */
    private function reapInBackground(): void
    {
        $self = $this;
        async(static function () use ($self): void {
            try {
                $self->process->join($self->deadline);
                $self->finish();
            } catch (CancelledException) {
                // join() has sent TERM, then KILL, to the script and reaped it; now the rest of its group.
                $self->signalGroup(\SIGKILL);
                $self->finish();
            }
        })->ignore();
    }

    private function waitForExit(float $seconds): void
    {
        $interval = 0.002;
        $deadline = \hrtime(true) / 1e9 + $seconds;
        while ($this->process->isRunning() && \hrtime(true) / 1e9 < $deadline) {
            delay($interval);
            $interval = \min($interval * 2, 0.05);
        }
    }

    private function signalGroup(int $signal): void
    {
        if ($this->grouped) {
            @\posix_kill(-$this->process->pid(), $signal);
        } elseif ($this->process->isRunning()) {
            $this->process->signal($signal);
        }
    }

    private function finish(): void
    {
        if ($this->exitCode === null && !$this->process->isRunning()) {
            $this->exitCode = $this->process->join();
        }
        ($this->release)();
        if (!$this->gone->isComplete()) {
            $this->gone->complete();
        }
    }
}
