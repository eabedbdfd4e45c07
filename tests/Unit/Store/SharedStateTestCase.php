<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Store;

use Kiln\Store\SharedState;
use Kiln\Tests\Support\ForkedChildren;
use PHPUnit\Framework\TestCase;

/** The contract every SharedState implementation passes (see the interface's docblock). */
abstract class SharedStateTestCase extends TestCase
{
    use ForkedChildren;

    /** A fresh, empty store, shared with processes forked after this call. */
    abstract protected function createState(): SharedState;

    public function testAnAbsentKeyReadsAsNull(): void
    {
        $state = $this->createState();
        self::assertNull($state->get('nothing'));
        self::assertNull($state->update('nothing', static fn(?array $current): ?array => $current, 60));
    }

    public function testUpdatePassesTheStoredValueToTheNextUpdate(): void
    {
        $state = $this->createState();
        $seen = [];
        for ($i = 1; $i <= 3; $i++) {
            $state->update('count', static function (?array $current) use (&$seen): array {
                $seen[] = $current;
                return ['n' => ($current['n'] ?? 0) + 1, 'at' => 1.5];
            }, 60);
        }
        self::assertSame([null, ['n' => 1, 'at' => 1.5], ['n' => 2, 'at' => 1.5]], $seen);
        self::assertSame(['n' => 3, 'at' => 1.5], $state->get('count'));
    }

    public function testKeysAreIndependentAndAnyStringIsAKey(): void
    {
        $state = $this->createState();
        $keys = ['a', 'A', "with\0nul", str_repeat('long', 3000), '', '🔑'];
        foreach ($keys as $i => $key) {
            $state->update($key, static fn(): array => [$i], 60);
        }
        foreach ($keys as $i => $key) {
            self::assertSame([$i], $state->get($key), 'key #' . $i);
        }
    }

    public function testReturningNullOrDeleteRemovesTheKey(): void
    {
        $state = $this->createState();
        $state->update('k', static fn(): array => [1], 60);
        self::assertNull($state->update('k', static fn(): ?array => null, 60));
        self::assertNull($state->get('k'));
        $state->update('k', static fn(): array => [2], 60);
        $state->delete('k');
        $state->delete('never-there');
        self::assertNull($state->get('k'));
    }

    public function testACallbackThatThrowsWritesNothingAndReleasesTheLock(): void
    {
        $state = $this->createState();
        $state->update('k', static fn(): array => [1], 60);
        try {
            $state->update('k', static fn(): array => throw new \RuntimeException('boom'), 60);
            self::fail('the exception propagates');
        } catch (\RuntimeException $e) {
            self::assertSame('boom', $e->getMessage());
        }
        self::assertSame([2], $state->update('k', static fn(?array $c): array => [($c[0] ?? 0) + 1], 60));
    }

    public function testACallbackThatCallsTheStoreAgainIsRefused(): void
    {
        $state = $this->createState();
        $this->expectException(\Error::class);
        $state->update('k', static fn(): array => $state->update('k', static fn(): array => [], 60) ?? [], 60);
    }

    public function testANegativeTtlIsRefused(): void
    {
        $this->expectException(\ValueError::class);
        $this->createState()->update('k', static fn(): array => [], -1);
    }

    public function testAnExpiredKeyReadsAsAbsentAndAZeroTtlNeverExpires(): void
    {
        $state = $this->createState();
        $written = microtime(true);
        $state->update('short', static fn(): array => [1], 1);
        $state->update('forever', static fn(): array => [2], 0);
        // A key lives at most TTL + 1 s (whole seconds of the implementation's own clock).
        usleep(max(0, (int) (($written + 2.1 - microtime(true)) * 1e6)));
        self::assertNull($state->get('short'));
        self::assertNull($state->update('short', static fn(?array $current): ?array => $current, 60));
        self::assertSame([2], $state->get('forever'));
    }

    public function testFourProcessesIncrementingOneCounterLoseNoUpdate(): void
    {
        $state = $this->createState();
        $state->update('counter', static fn(): array => [0], 60);
        $this->inChildren(4, static function () use ($state): void {
            for ($i = 0; $i < 1000; $i++) {
                $state->update('counter', static fn(?array $current): array => [($current[0] ?? 0) + 1], 60);
            }
        });
        self::assertSame([4000], $state->get('counter'));
    }
}
