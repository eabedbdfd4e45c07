<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Store;

use Kiln\Store\MemoryTable;
use Kiln\Store\Store;
use Kiln\Store\TableStore;

/** The Store contract on the /dev/shm table, the node's store where APCu is missing. */
final class TableStoreTest extends StoreTestCase
{
    /** @var list<string> */
    private array $paths = [];

    protected function tearDown(): void
    {
        foreach ($this->paths as $path) {
            @unlink($path);
        }
    }

    protected function createStore(): Store
    {
        return new TableStore(MemoryTable::file($this->path(), buckets: 256, slots: 8, slotSize: 1024));
    }

    protected function createSmallStore(): array
    {
        return [new TableStore(MemoryTable::file($this->path(), buckets: 8, slots: 4, slotSize: 256)), 32];
    }

    private function path(): string
    {
        return $this->paths[] = sys_get_temp_dir() . '/kiln-store-test-' . getmypid() . '-' . bin2hex(random_bytes(4));
    }
}
