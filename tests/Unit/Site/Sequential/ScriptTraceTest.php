<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Site\Sequential;

use Kiln\Site\Sequential\ScriptTrace;
use PHPUnit\Framework\TestCase;

final class ScriptTraceTest extends TestCase
{
    public function testAnErrorReadsAsPhpWritesItWithItsFramesAndMain(): void
    {
        $error = self::thrown();
        $text = ScriptTrace::of($error);
        self::assertStringStartsWith('RuntimeException: outer in ' . __FILE__ . ':', $text);
        self::assertStringContainsString("\nStack trace:\n#0 " . __FILE__ . '(', $text);
        self::assertMatchesRegularExpression('/\n#\d+ \{main\}$/', $text);
        self::assertSame(1, substr_count($text, '{main}'), 'one main per exception: the previous one comes first, in its own part');
    }

    public function testPreviousErrorsComeFirstThenNextAsPhpOrdersThem(): void
    {
        $text = ScriptTrace::of(new \RuntimeException('outer', 0, new \LogicException('inner')));
        self::assertMatchesRegularExpression('/^LogicException: inner in .*\n\nNext RuntimeException: outer in /s', $text);
        self::assertSame(2, substr_count($text, '{main}'));
    }

    private static function thrown(): \RuntimeException
    {
        try {
            (static function (): never {
                throw new \RuntimeException('outer');
            })();
        } catch (\RuntimeException $e) {
            return $e;
        }
    }
}
