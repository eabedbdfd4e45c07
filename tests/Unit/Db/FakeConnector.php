<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Db;

use Kiln\Db\Connection;
use Kiln\Db\Connector;
use Kiln\Loop\Cancellation;

use function Kiln\Loop\delay;

/**
 * Connections that understand a few made-up statements, each taking real loop time: `SLEEP s` waits s
 * seconds, `FAIL` is refused by the "server" (SQLSTATE 42000), `LOSE` loses the connection half-way,
 * BEGIN/COMMIT/ROLLBACK/SAVEPOINT move the transaction state, anything else answers one row. Every
 * statement is logged as "#connection statement".
 */
final class FakeConnector implements Connector
{
    /** @var list<string> */
    public array $log = [];
    /** @var list<FakeConnection> */
    public array $opened = [];
    public float $connectTime = 0.0;

    public function connect(?Cancellation $cancellation = null): Connection
    {
        if ($this->connectTime > 0) {
            delay($this->connectTime, $cancellation);
        }
        $connection = new FakeConnection($this, \count($this->opened) + 1);
        $this->opened[] = $connection;

        return $connection;
    }

    public function describe(): string
    {
        return 'fake://user@db';
    }
}
