<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Store;

use Kiln\Store\ApcuState;
use Kiln\Store\ApcuStore;
use Kiln\Store\Store;

/** The Store contract on APCu (needs apc.enable_cli=1, as `make test` runs PHPUnit). */
final class ApcuStoreTest extends StoreTestCase
{
    protected function setUp(): void
    {
        self::assertTrue(
            ApcuState::available(),
            'APCu must be loaded and on for this suite: run `make test`, or php -d apc.enable_cli=1 vendor/bin/phpunit',
        );
    }

    protected function createStore(): Store
    {
        return new ApcuStore('kiln.test:' . bin2hex(random_bytes(6)) . ':');
    }

    protected function createSmallStore(): array
    {
        // The bound is checked every maxEntries/8 writes: up to that many more keys between two checks.
        // APCu's entry count includes other tests' keys, so this counts only its own prefix (count()).
        return [new ApcuStore('kiln.test:' . bin2hex(random_bytes(6)) . ':', maxEntries: 64), 64 + 8];
    }
}
