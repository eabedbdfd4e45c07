<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Store;

use Kiln\Store\ApcuState;
use Kiln\Store\SharedState;

/**
 * The shared contract on APCu. Needs ext-apcu with apc.enable_cli=1, which `make test` provides
 * (scripts/install-deps.sh installs php-apcu; the Makefile starts PHPUnit with -d apc.enable_cli=1).
 */
final class ApcuStateTest extends SharedStateTestCase
{
    protected function setUp(): void
    {
        self::assertTrue(
            ApcuState::available(),
            'APCu must be loaded and on for this suite: run `make test`, or php -d apc.enable_cli=1 vendor/bin/phpunit',
        );
    }

    protected function createState(): SharedState
    {
        return new ApcuState('kiln.test:' . bin2hex(random_bytes(6)) . ':');
    }
}
