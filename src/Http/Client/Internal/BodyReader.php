<?php

declare(strict_types=1);

namespace Kiln\Http\Client\Internal;

use Kiln\Http\Client\ClientException;
use Kiln\Loop\Cancellation;
use Kiln\Loop\CancelledException;

/**
 * Pulls the body of one response off its connection, then hands the connection back: to the pool
 * when the response ended cleanly and the connection is reusable, closed otherwise. Destroying an
 * unfinished reader closes the connection, so a forgotten response never leaks a pool slot.
 *
 * @internal
 */
final class BodyReader
{
    private bool $done = false;
    /** @var array<string, list<string>> */
    private array $trailers = [];

    public function __construct(
        private readonly Connection $connection,
        private readonly ConnectionPool $pool,
        /** Holds the request's total timeout alive until the body ends. */
        private ?Cancellation $cancellation,
    ) {}

    public function __destruct()
    {
        $this->discard();
    }

    /** The next body piece, or null at the end. */
    public function read(): ?string
    {
        while (!$this->done) {
            try {
                $event = $this->connection->parser->next();
                if ($event === null) {
                    $this->connection->fill($this->cancellation);
                    continue;
                }
            } catch (ClientException | CancelledException $e) {
                $this->discard();
                throw $e;
            }
            if (\is_string($event)) {
                return $event;
            }
            \assert($event instanceof ResponseEnd);
            $this->done = true;
            $this->trailers = $event->trailers;
            $this->cancellation = null;
            if ($event->reusable && $this->connection->parser->buffered() === 0) {
                $this->pool->release($this->connection);
            } else {
                $this->pool->discard($this->connection);
            }
        }

        return null;
    }

    public function isDone(): bool
    {
        return $this->done;
    }

    /** @return array<string, list<string>> */
    public function trailers(): array
    {
        return $this->trailers;
    }

    /** Gives up the rest of the body: the connection is closed (its framing is unknown). */
    public function discard(): void
    {
        if (!$this->done) {
            $this->done = true;
            $this->cancellation = null;
            $this->pool->discard($this->connection);
        }
    }
}
