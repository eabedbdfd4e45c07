<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Db;

use Kiln\Db\Connection;
use Kiln\Db\ConnectionException;
use Kiln\Db\QueryException;
use Kiln\Db\Result;
use Kiln\Loop\Cancellation;

use function Kiln\Loop\delay;

/** One connection of FakeConnector: see there what it understands. */
final class FakeConnection implements Connection
{
    public bool $closed = false;
    private bool $broken = false;
    private bool $transaction = false;
    private bool $busy = false;

    public function __construct(private readonly FakeConnector $connector, public readonly int $number) {}

    public function run(string $sql, array $params = [], ?Cancellation $cancellation = null): Result
    {
        if ($this->busy || $this->broken) {
            throw new \Error("connection #{$this->number} used while busy or broken");
        }
        $this->connector->log[] = "#{$this->number} $sql";
        $this->busy = true;
        try {
            if (str_starts_with($sql, 'SLEEP ')) {
                delay((float) substr($sql, 6), $cancellation);
            }
        } catch (\Throwable $e) {
            $this->broken = true; // cancelled half-way: the answer is still on its way
            throw $e;
        } finally {
            $this->busy = false;
        }

        return match ($sql) {
            'FAIL' => throw new QueryException('syntax error', '42000'),
            'LOSE' => $this->lose(),
            'BEGIN' => $this->transaction(true),
            'COMMIT', 'ROLLBACK' => $this->transaction(false),
            default => new Result([['connection' => $this->number, 'params' => $params]], 1),
        };
    }

    /** `SLOW s`: each of the three rows takes the server s seconds (a SLEEP before each FETCH). */
    public function stream(string $sql, array $params = [], int $batch = 1000, ?Cancellation $cancellation = null): \Generator
    {
        $slow = str_starts_with($sql, 'SLOW ') ? substr($sql, 5) : null;
        $this->run('BEGIN', [], $cancellation);
        for ($i = 1; $i <= 3; $i++) {
            if ($slow !== null) {
                $this->run("SLEEP $slow", [], $cancellation);
            }
            yield $this->run("FETCH $i", [], $cancellation)->rows[0] + ['i' => $i];
        }
        $this->run('COMMIT', [], $cancellation);
    }

    public function inTransaction(): bool
    {
        return $this->transaction;
    }

    public function isBroken(): bool
    {
        return $this->broken || $this->closed;
    }

    public function close(): void
    {
        $this->closed = true;
    }

    private function lose(): never
    {
        $this->broken = true;
        throw new ConnectionException('The connection to fake://user@db was lost');
    }

    private function transaction(bool $open): Result
    {
        $this->transaction = $open;

        return new Result([]);
    }
}
