<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Store;

use Kiln\Store\MemoryTable;
use Kiln\Store\Store;
use Kiln\Store\TableStore;

/** Contract tests on a TableStore in a file of their own, removed after each test. */
trait TableBackend
{
    /** @var list<string> */
    private array $tables = [];

    protected function createStore(): Store
    {
        $path = $this->tables[] = sys_get_temp_dir() . '/kiln-store-test-' . getmypid() . '-' . bin2hex(random_bytes(4));
        return new TableStore(MemoryTable::file($path, buckets: 256, slots: 8, slotSize: 1024));
    }

    protected function tearDown(): void
    {
        foreach ($this->tables as $path) {
            @unlink($path);
        }
    }
}
