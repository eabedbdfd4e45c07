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

    public function testNameAsDefaultRenamesAClosuresBufferOnTopAndNothingElse(): void
    {
        $stack = OutputStack::find();
        if ($stack === null) {
            self::fail('needs ext-ffi and a PHP binary exporting output_globals: scripts/install-deps.sh installs it');
        }
        $kept = '';
        ob_start(static function (string $bytes) use (&$kept): string {
            $kept .= $bytes;
            return '';
        });
        self::assertSame('Closure::__invoke', ob_get_status()['name']);
        self::assertTrue($stack->nameAsDefault());
        self::assertSame('default output handler', ob_get_status()['name']);
        $names = ob_list_handlers();
        self::assertSame('default output handler', $names[\count($names) - 1]);
        echo 'still captured';
        self::assertFalse($stack->nameAsDefault(), 'renamed once: the name is no longer a Closure\'s');
        ob_start();
        self::assertFalse($stack->nameAsDefault(), 'PHP\'s own buffer is left alone');
        ob_end_flush();
        ob_end_flush();
        self::assertSame('still captured', $kept, 'the handler runs as before, and its buffer ends');
    }
}
