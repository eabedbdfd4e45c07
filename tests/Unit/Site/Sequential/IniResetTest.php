<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Site\Sequential;

use Kiln\Site\Sequential\Engine\ExecutorGlobals;
use Kiln\Site\Sequential\IniReset;
use PHPUnit\Framework\Attributes\RunInSeparateProcess;
use PHPUnit\Framework\TestCase;

/** In a process of their own: the native mode needs every setting at its start-up value. */
final class IniResetTest extends TestCase
{
    #[RunInSeparateProcess]
    public function testWhatARequestSetIsPutBackAndASilencedExpressionCostsNoReset(): void
    {
        $executor = self::atStartupValues();
        $reset = IniReset::fromCurrent($executor);
        self::assertTrue($reset->isNative());
        $table = static fn(): int => $executor->native->u64($executor->base + $executor->modifiedIni);
        [$precision, $reporting] = [ini_get('precision'), error_reporting()];

        ini_set('precision', '5');
        $reset->reset();
        self::assertSame($precision, ini_get('precision'), 'an ini_set() is undone');
        self::assertSame(0, $table(), 'and the table of changed settings is gone');

        @strlen('silenced'); // @ enters error_reporting in the table, at its own value
        self::assertNotSame(0, $table());
        $reset->reset();
        self::assertNotSame(0, $table(), 'error_reporting alone, unchanged: left as it is');
        self::assertSame($reporting, error_reporting());

        ini_set('precision', '7');
        $reset->reset();
        self::assertSame($precision, ini_get('precision'), 'a setting changed beside it is still undone');

        @strlen('silenced');
        error_reporting($reporting & ~\E_NOTICE);
        $reset->reset();
        self::assertSame($reporting, error_reporting(), 'error_reporting changed after a silenced expression is undone');
        self::assertSame(0, $table());
    }

    #[RunInSeparateProcess]
    public function testASettingChangedBeforeTheStartKeepsTheNativeResetOffAndIsNamed(): void
    {
        $executor = self::atStartupValues();
        ini_set('precision', '9');

        $reset = IniReset::fromCurrent($executor);

        self::assertFalse($reset->isNative(), 'PHP\'s reset would take precision back to its start-up value');
        self::assertSame(['precision'], $reset->changedAtStart());
        ini_set('precision', '3');
        $reset->reset();
        self::assertSame('9', ini_get('precision'), 'the comparing mode puts back the value the worker started with');
    }

    /** EG(), with every setting back at its start-up value (whatever the test runner set). */
    private static function atStartupValues(): ExecutorGlobals
    {
        $executor = ExecutorGlobals::find();
        self::assertNotNull($executor, 'EG() is found on this PHP');
        foreach ((array) ini_get_all(null, true) as $name => $entry) {
            if (\is_array($entry) && $entry['global_value'] !== $entry['local_value']) {
                ini_restore($name);
            }
        }
        return $executor;
    }
}
