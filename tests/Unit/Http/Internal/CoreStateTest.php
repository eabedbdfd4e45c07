<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Http\Internal;

use Kiln\Http\Internal\CoreState;
use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;

final class CoreStateTest extends TestCase
{
    private const LEGAL = [
        'serving' => ['winding-down', 'draining', 'finishing', 'stopped'],
        'winding-down' => ['draining', 'finishing', 'stopped'],
        'draining' => ['finishing', 'stopped'],
        'finishing' => ['stopped'],
        'stopped' => [],
    ];

    /** @return iterable<string, array{CoreState, CoreState, bool}> every pair of states, and whether the first may become the second */
    public static function transitions(): iterable
    {
        foreach (CoreState::cases() as $from) {
            foreach (CoreState::cases() as $to) {
                yield "$from->value to $to->value" => [$from, $to, \in_array($to->value, self::LEGAL[$from->value], true)];
            }
        }
    }

    #[DataProvider('transitions')]
    public function testOnlyTheForwardTransitionsAreAllowed(CoreState $from, CoreState $to, bool $legal): void
    {
        self::assertSame($legal, $from->canBecome($to));
        if ($legal) {
            self::assertSame($to, $from->to($to));
            return;
        }
        try {
            $from->to($to);
            self::fail("$from->value to $to->value was allowed");
        } catch (\Error $e) {
            self::assertStringContainsString("cannot go from $from->value to $to->value", $e->getMessage());
        }
    }

    public function testOnlyServingAndWindingDownServe(): void
    {
        $serving = array_values(array_filter(CoreState::cases(), static fn(CoreState $s): bool => $s->serves()));
        self::assertSame([CoreState::Serving, CoreState::WindingDown], $serving);
    }

    public function testTheTableCoversEveryState(): void
    {
        self::assertSame(array_keys(self::LEGAL), array_map(static fn(CoreState $s): string => $s->value, CoreState::cases()));
    }
}
