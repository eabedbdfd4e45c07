<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Http;

use Kiln\Http\Limits;
use PHPUnit\Framework\TestCase;

final class LimitsTest extends TestCase
{
    public function testAnotherConnectionCapKeepsEveryOtherLimit(): void
    {
        // Every limit set to a value of its own, none the default, so a limit withConnections() dropped shows.
        $values = [];
        foreach ((new \ReflectionMethod(Limits::class, '__construct'))->getParameters() as $i => $parameter) {
            $default = $parameter->getDefaultValue();
            \assert(\is_int($default) || \is_float($default));
            $values[$parameter->getName()] = \is_float($default) ? $default + 0.5 + $i : $default + 1 + $i;
        }
        $limits = Limits::fromArray($values);
        $changed = $limits->withConnections(7);
        self::assertSame(7, $changed->connections);
        self::assertSame(array_replace($values, ['connections' => 7]), get_object_vars($changed));
        self::assertSame($values['connections'], $limits->connections, 'the original is unchanged');
    }

    public function testAnotherConnectionCapIsCheckedLikeAnyLimit(): void
    {
        $this->expectException(\ValueError::class);
        $this->expectExceptionMessage('--limit-connections must be greater than zero, got 0');
        (new Limits())->withConnections(0);
    }

    public function testErrorsNameTheCommandLineOption(): void
    {
        self::assertSame('--limit-body-size', Limits::option('bodySize'));
        self::assertSame('--limit-sse-replay-keep', Limits::option('sseReplayKeep'));
        try {
            Limits::fromArray(['headerTimeout' => 'soon']);
            self::fail('no error');
        } catch (\ValueError $e) {
            self::assertSame("--limit-header-timeout must be a number, got 'soon'", $e->getMessage());
        }
    }
}
