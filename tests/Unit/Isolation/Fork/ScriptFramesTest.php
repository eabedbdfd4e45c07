<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Isolation\Fork;

use Kiln\Isolation\Fork\Internal\ScriptFrames;
use PHPUnit\Framework\TestCase;

final class ScriptFramesTest extends TestCase
{
    public function testTheTraceEndsBeforeTheFirstFrameOfTheEntryFile(): void
    {
        $error = self::thrown();
        // #0 thrown() calls inner(), #1 this test calls thrown(), #2 PHPUnit calls this test: PHPUnit's file is the entry.
        $entry = (string) ($error->getTrace()[2]['file'] ?? '');
        self::assertNotSame(__FILE__, $entry);
        $before = \array_slice($error->getTrace(), 0, 2);

        self::assertSame($error, ScriptFrames::cut($error, $entry));
        self::assertSame($before, $error->getTrace());
        self::assertStringEndsWith("\n#2 {main}", $error->getTraceAsString());
        self::assertStringNotContainsString($entry, $error->getTraceAsString());
    }

    public function testEveryPreviousErrorOfTheChainIsCutToo(): void
    {
        $error = (static fn() => new \RuntimeException('outer', 0, new \TypeError('inner')))();
        self::assertSame(__FILE__, $error->getTrace()[0]['file'] ?? null);
        ScriptFrames::cut($error, __FILE__);
        self::assertSame([], $error->getTrace());
        self::assertSame([], $error->getPrevious()?->getTrace());
        self::assertSame('inner', $error->getPrevious()->getMessage());
    }

    public function testATraceWithoutTheEntryFileIsLeftAlone(): void
    {
        $error = new \LogicException('elsewhere');
        $trace = $error->getTrace();
        ScriptFrames::cut($error, '/no/such/entry.php');
        self::assertSame($trace, $error->getTrace());
    }

    private static function thrown(): \Throwable
    {
        try {
            self::inner();
        } catch (\Throwable $e) {
            return $e;
        }
    }

    private static function inner(): never
    {
        throw new \DomainException('deep');
    }
}
