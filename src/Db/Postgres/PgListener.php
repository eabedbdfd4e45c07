<?php

declare(strict_types=1);

namespace Kiln\Db\Postgres;

use Kiln\Db\ConnectionException;
use Kiln\Db\Notification;
use Kiln\Loop\Cancellation;
use Kiln\Loop\CancelledException;
use Kiln\Loop\CompositeCancellation;
use Kiln\Loop\DeferredCancellation;

/**
 * The notifications of a LISTEN, in the order the server sent them, on a connection of their own.
 * next() suspends until one arrives; iterating yields them until close(). A lost connection ends the
 * wait with ConnectionException (notifications sent meanwhile are lost: LISTEN again on a new one).
 *
 * @implements \IteratorAggregate<int, Notification>
 */
final class PgListener implements \IteratorAggregate
{
    /** @var list<Notification> */
    private array $pending = [];
    private bool $closed = false;
    private readonly DeferredCancellation $closing;

    /** @internal made by PgConnector::listen() */
    public function __construct(
        private readonly PgConnection $connection,
        private readonly \PgSql\Connection $link,
    ) {
        $this->closing = new DeferredCancellation();
    }

    /** @throws ConnectionException when the connection is lost or the listener closed */
    public function next(?Cancellation $cancellation = null): Notification
    {
        while ($this->pending === []) {
            if ($this->closed) {
                throw new ConnectionException('The listener is closed');
            }
            $this->drain();
            if ($this->pending === []) {
                $closing = $this->closing->getCancellation();
                try {
                    $this->connection->waitForInput($cancellation === null ? $closing : new CompositeCancellation($cancellation, $closing));
                } catch (CancelledException $e) {
                    if ($this->isClosed()) {
                        throw new ConnectionException('The listener is closed', 0, $e);
                    }
                    throw $e;
                }
            }
        }

        return array_shift($this->pending);
    }

    /** @return \Generator<int, Notification> */
    public function getIterator(): \Generator
    {
        while (!$this->closed) {
            try {
                yield $this->next();
            } catch (ConnectionException $e) {
                if ($this->isClosed()) {
                    return;
                }
                throw $e;
            }
        }
    }

    public function isClosed(): bool
    {
        return $this->closed;
    }

    /** Ends the listener: a Fiber waiting in next() gets ConnectionException, an iteration ends. */
    public function close(): void
    {
        if (!$this->closed) {
            $this->closed = true;
            $this->closing->cancel();
            $this->connection->close();
        }
    }

    private function drain(): void
    {
        while (\is_array($notify = pg_get_notify($this->link, PGSQL_ASSOC))) {
            $this->pending[] = new Notification((string) $notify['message'], (string) ($notify['payload'] ?? ''), (int) $notify['pid']);
        }
    }
}
