<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Store;

use Kiln\Store\MemoryTable;
use Kiln\Store\SharedState;
use Kiln\Store\StoreException;

final class FileMemoryTableTest extends SharedStateTestCase
{
    private string $path;

    protected function setUp(): void
    {
        $this->path = sys_get_temp_dir() . '/kiln-store-test-' . getmypid() . '-' . bin2hex(random_bytes(4));
    }

    protected function tearDown(): void
    {
        @unlink($this->path);
    }

    protected function createState(): SharedState
    {
        return MemoryTable::file($this->path, buckets: 64, slots: 4);
    }

    public function testAnotherInstanceOnThePathSharesTheTableAndAdoptsItsGeometry(): void
    {
        MemoryTable::file($this->path, buckets: 8, slots: 2, slotSize: 64)->update('k', static fn(): array => ['v'], 60);
        $other = MemoryTable::file($this->path);
        self::assertSame(['v'], $other->get('k'));
        self::assertSame(8 * 2 * 64 + 64, filesize($this->path));
    }

    public function testAFullBucketEvictsTheEntryThatExpiresSoonest(): void
    {
        $table = MemoryTable::file($this->path, buckets: 1, slots: 2);
        $table->update('soon', static fn(): array => [1], 100);
        $table->update('late', static fn(): array => [2], 500);
        $table->update('new', static fn(): array => [3], 300);
        self::assertNull($table->get('soon'));
        self::assertSame([2], $table->get('late'));
        self::assertSame([3], $table->get('new'));
    }

    public function testAValueTooLargeForASlotIsRefusedAndTheOldValueKept(): void
    {
        $table = MemoryTable::file($this->path, buckets: 4, slots: 2, slotSize: 64);
        $table->update('k', static fn(): array => ['small'], 60);
        try {
            $table->update('k', static fn(): array => [str_repeat('x', 100)], 60);
            self::fail('a value past the slot size is refused');
        } catch (\ValueError $e) {
            self::assertStringContainsString('does not fit', $e->getMessage());
        }
        self::assertSame(['small'], $table->get('k'));
    }

    public function testAFileOthersCanWriteIsRefused(): void
    {
        touch($this->path);
        chmod($this->path, 0o666);
        $this->expectException(StoreException::class);
        MemoryTable::file($this->path)->get('k');
    }

    public function testAFileThatIsNotATableIsRefused(): void
    {
        file_put_contents($this->path, 'something else');
        chmod($this->path, 0o600);
        $this->expectException(StoreException::class);
        MemoryTable::file($this->path)->get('k');
    }
}
