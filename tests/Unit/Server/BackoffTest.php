<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Server;

use Kiln\Server\Backoff;
use PHPUnit\Framework\TestCase;

final class BackoffTest extends TestCase
{
    public function testAHealthySlotRestartsAtOnce(): void
    {
        self::assertSame(0.0, (new Backoff())->delay(0));
    }

    public function testEarlyDeathsDoubleTheDelayUpToTheCap(): void
    {
        $backoff = new Backoff(0.1, 10.0);
        self::assertEqualsWithDelta(0.1, $backoff->delay(1), 1e-9);
        self::assertEqualsWithDelta(0.2, $backoff->delay(2), 1e-9);
        self::assertEqualsWithDelta(0.4, $backoff->delay(3), 1e-9);
        self::assertEqualsWithDelta(6.4, $backoff->delay(7), 1e-9);
        self::assertSame(10.0, $backoff->delay(8));
        self::assertSame(10.0, $backoff->delay(1000));
    }

    public function testNonsenseBoundsAreRejected(): void
    {
        $this->expectException(\ValueError::class);
        new Backoff(1.0, 0.5);
    }
}
