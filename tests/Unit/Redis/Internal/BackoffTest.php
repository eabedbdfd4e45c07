<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Redis\Internal;

use Kiln\Redis\Internal\Backoff;
use PHPUnit\Framework\TestCase;

final class BackoffTest extends TestCase
{
    public function testNoFailureMeansNoWait(): void
    {
        self::assertSame(0.0, (new Backoff(0.05, 5.0))->delay(0));
    }

    public function testTheDelayDoublesUpToTheCapWithJitterBetweenHalfAndAll(): void
    {
        $backoff = new Backoff(0.05, 1.0);
        $ceilings = [1 => 0.05, 2 => 0.1, 3 => 0.2, 4 => 0.4, 5 => 0.8, 6 => 1.0, 40 => 1.0];
        foreach ($ceilings as $failures => $ceiling) {
            $seen = [];
            for ($i = 0; $i < 200; $i++) {
                $delay = $backoff->delay($failures);
                self::assertGreaterThanOrEqual($ceiling * 0.5, $delay, "after $failures failures");
                self::assertLessThanOrEqual($ceiling, $delay, "after $failures failures");
                $seen[(string) $delay] = true;
            }
            self::assertGreaterThan(50, \count($seen), 'the delays are spread, not one value');
        }
    }
}
