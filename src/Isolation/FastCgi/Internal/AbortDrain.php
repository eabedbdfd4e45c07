<?php

declare(strict_types=1);

namespace Kiln\Isolation\FastCgi\Internal;

use Kiln\Isolation\FastCgi\FastCgiException;
use Kiln\Isolation\FastCgi\RecordEncoder;
use Kiln\Isolation\FastCgi\RecordType;
use Kiln\Loop\Loop;

/**
 * Gives up the request in flight on a connection: sends ABORT_REQUEST, then reads (and drops) what the
 * responder still sends until its END_REQUEST, for at most $grace seconds. A connection that got its
 * END_REQUEST goes back to the pool; otherwise it is closed, which a responder that ignores ABORT_REQUEST
 * (php-fpm does) notices at its next write. Pure loop callbacks, no Fiber: safe to start from a
 * destructor or a generator's finally block.
 *
 * @internal
 */
final class AbortDrain
{
    private ?string $watcher = null;
    private ?string $timer = null;
    private bool $finished = false;

    private function __construct(
        private readonly Connection $connection,
        private readonly ConnectionPool $pool,
        private readonly bool $reusable,
    ) {}

    public static function start(Connection $connection, ConnectionPool $pool, int $requestId, float $grace, bool $reusable): void
    {
        if (!$connection->writeNow(RecordEncoder::abortRequest($requestId))) {
            $pool->discard($connection); // inside a record, or the socket is full or closed: closing is the abort
            return;
        }
        $drain = new self($connection, $pool, $reusable);
        if ($drain->consume()) {
            return;
        }
        $watcher = Loop::onReadable($connection->stream(), static function () use ($drain): void {
            $drain->onReadable();
        });
        $timer = Loop::delay($grace, static function () use ($drain): void {
            $drain->finish(false);
        });
        Loop::unreference($watcher);
        Loop::unreference($timer);
        [$drain->watcher, $drain->timer] = [$watcher, $timer];
    }

    private function onReadable(): void
    {
        try {
            if ($this->connection->readNow() === '') {
                return;
            }
        } catch (FastCgiException) {
            $this->finish(false);

            return;
        }
        $this->consume();
    }

    /** Drops buffered records up to END_REQUEST; true once finished. */
    private function consume(): bool
    {
        try {
            while (($record = $this->connection->decoder->next()) !== null) {
                if ($record->is(RecordType::EndRequest)) {
                    $this->finish($this->reusable && $this->connection->decoder->buffered() === 0);

                    return true;
                }
            }
        } catch (FastCgiException) {
            $this->finish(false);

            return true;
        }

        return false;
    }

    private function finish(bool $reuse): void
    {
        if ($this->finished) {
            return;
        }
        $this->finished = true;
        if ($this->watcher !== null) {
            Loop::cancel($this->watcher);
        }
        if ($this->timer !== null) {
            Loop::cancel($this->timer);
        }
        $reuse ? $this->pool->release($this->connection) : $this->pool->discard($this->connection);
    }
}
