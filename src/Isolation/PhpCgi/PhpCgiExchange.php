<?php

declare(strict_types=1);

namespace Kiln\Isolation\PhpCgi;

use Kiln\Isolation\FastCgi\FastCgiException;
use Kiln\Isolation\FastCgi\FastCgiResponse;
use Kiln\Isolation\FastCgi\FastCgiTimeoutException;
use Kiln\Loop\Loop;

/**
 * One request in flight on one php-cgi child: STDOUT read as it arrives, and the child's lease given back
 * exactly once — after END_REQUEST, or after a timeout or a broken exchange (the connection is then closed;
 * the shared parent's child is not killed: docs/design/018).
 *
 * Given up early (abandon(), or destroyed unfinished: the client went away, a HEAD body never read):
 * ABORT_REQUEST is sent. php-cgi does not act on it (it reads nothing while a script runs), so the child
 * stays leased until the exchange settles: END_REQUEST within ABORT_GRACE seconds makes it reusable; if
 * instead the connection had to be closed (which stops a script at its next output), the lease ends
 * without the connection.
 */
final class PhpCgiExchange
{
    public const ABORT_GRACE = 2.0;
    private const SETTLE_POLL = 0.01;

    private bool $finished = false;

    public function __construct(
        private readonly FastCgiResponse $response,
        private readonly PhpCgiLease $lease,
        private readonly PhpCgiPool $pool,
    ) {}

    public function __destruct()
    {
        if (!$this->finished) { // nearly every exchange is over by now: no call for it
            $this->abandon();
        }
    }

    /**
     * The next STDOUT chunk, null at END_REQUEST.
     *
     * @throws FastCgiException (FastCgiTimeoutException past the time limit); the connection is then closed
     */
    public function read(): ?string
    {
        return $this->next(true);
    }

    /**
     * As read(), but never waits: '' when the next chunk has not arrived yet. A small script's output and
     * its END_REQUEST come in one write, so after the head this tells whether the whole answer is here.
     *
     * @throws FastCgiException for a broken exchange; the connection is then closed
     */
    public function poll(): ?string
    {
        return $this->next(false);
    }

    /** The pid of the child running it (for logs). */
    public function pid(): int
    {
        return $this->lease->pid;
    }

    private function next(bool $wait): ?string
    {
        if ($this->finished) {
            return null;
        }
        try {
            $chunk = $wait ? $this->response->read() : $this->response->poll();
        } catch (FastCgiTimeoutException $e) {
            $this->settle(false, "still running at the time limit of {$this->pool->options->timeLimit} s");
            throw $e;
        } catch (FastCgiException $e) {
            $this->settle(false, $e->getMessage());
            throw $e;
        }
        if ($chunk === null) {
            $this->settle(true);
        }
        return $chunk;
    }

    /** Gives the request up without waiting; the child comes back (or is replaced) once it settles. Never suspends. */
    public function abandon(): void
    {
        if ($this->finished) {
            return;
        }
        $this->finished = true;
        $this->response->abort();
        $pool = $this->pool;
        $lease = $this->lease;
        $response = $this->response;
        $giveUpAt = Loop::now() + self::ABORT_GRACE + 1.0;
        // This request's own connection says when it is over, whatever else is in flight to the pool.
        $settled = static function () use ($pool, $lease, $response, $giveUpAt): bool {
            if (!$response->isSettled() && Loop::now() < $giveUpAt) {
                return false; // ABORT_REQUEST sent; still reading towards END_REQUEST
            }
            $pool->release($lease, true, 'its request was abandoned');
            return true;
        };
        if (!$settled()) {
            Loop::repeat(self::SETTLE_POLL, static function (string $id) use ($settled): void {
                if ($settled()) {
                    Loop::cancel($id);
                }
            });
        }
    }

    private function settle(bool $reusable, string $why = ''): void
    {
        $this->finished = true;
        $this->pool->release($this->lease, $reusable, $why);
    }
}
