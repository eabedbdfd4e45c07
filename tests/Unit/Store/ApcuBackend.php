<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Store;

use Kiln\Store\ApcuState;
use Kiln\Store\ApcuStore;
use Kiln\Store\Store;

/** Contract tests on an ApcuStore of their own (needs apc.enable_cli=1, as `make test` runs PHPUnit). */
trait ApcuBackend
{
    protected function createStore(): Store
    {
        self::assertTrue(ApcuState::available(), 'APCu must be loaded and on: run `make test`, or php -d apc.enable_cli=1 vendor/bin/phpunit');
        return new ApcuStore('kiln.test:' . bin2hex(random_bytes(6)) . ':');
    }
}
