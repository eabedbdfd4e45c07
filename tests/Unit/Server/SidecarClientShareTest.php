<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Server;

use Kiln\Server\SidecarClient;
use PHPUnit\Framework\TestCase;

/** A worker's share of what the workers share (the php-cgi children they keep connections to). */
final class SidecarClientShareTest extends TestCase
{
    public function testTheSharesOfAllWorkersAddUpToTheTotalAndDifferByAtMostOne(): void
    {
        foreach ([[4, 2], [5, 2], [5, 3], [7, 4], [256, 3], [2, 2], [1, 1]] as [$total, $workers]) {
            $shares = [];
            for ($worker = 1; $worker <= $workers; $worker++) {
                $shares[] = (new SidecarClient(static function (): void {}, $worker, $workers))->share($total);
            }
            self::assertSame($total, array_sum($shares), "$total among $workers workers: " . implode(',', $shares));
            self::assertLessThanOrEqual(1, max($shares) - min($shares));
            self::assertGreaterThanOrEqual(1, min($shares));
            $descending = $shares;
            rsort($descending);
            self::assertSame($descending, $shares, 'the lowest numbers get the remainder');
        }
    }

    public function testFewerThingsThanWorkersGiveNoWorkerAShare(): void
    {
        foreach ([1, 2, 3] as $worker) {
            self::assertSame(0, (new SidecarClient(static function (): void {}, $worker, 3))->share(2));
        }
    }

    public function testOutsideAServerWithManyWorkersTheOneWorkerHasItAll(): void
    {
        self::assertSame(4, (new SidecarClient(static function (): void {}))->share(4));
    }
}
