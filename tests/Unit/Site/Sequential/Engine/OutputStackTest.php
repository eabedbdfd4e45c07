<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Site\Sequential\Engine;

use Kiln\Site\Sequential\Engine\OutputStack;
use PHPUnit\Framework\TestCase;

final class OutputStackTest extends TestCase
{
    public function testUnlockLetsABufferStartedAsNotRemovableBeEndedAndLeavesTheOnesBelowAlone(): void
    {
        $stack = OutputStack::find();
        if ($stack === null) {
            self::fail('needs ext-ffi and a PHP binary exporting output_globals: scripts/install-deps.sh installs it');
        }
        $base = ob_get_level();
        ob_start(null, 0, PHP_OUTPUT_HANDLER_STDFLAGS & ~PHP_OUTPUT_HANDLER_REMOVABLE);
        echo 'fixed';
        ob_start();
        echo ' and free';
        $status = ob_get_status(true);
        self::assertSame(0, $status[$base]['flags'] & PHP_OUTPUT_HANDLER_REMOVABLE);
        self::assertTrue(ob_end_flush());
        self::assertFalse(@ob_end_clean(), 'PHP refuses to end it');

        self::assertTrue($stack->unlock($base));

        self::assertSame($base + 1, ob_get_level());
        self::assertSame('fixed and free', ob_get_clean());
        self::assertSame($base, ob_get_level());
    }
}
