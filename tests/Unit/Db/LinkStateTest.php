<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Db;

use Kiln\Db\Internal\LinkState;
use PHPUnit\Framework\TestCase;

final class LinkStateTest extends TestCase
{
    public function testACallStartsOnAReadyConnectionAndLeavesItReady(): void
    {
        $busy = LinkState::Ready->enter();
        self::assertSame(LinkState::Busy, $busy);
        self::assertSame(LinkState::Ready, $busy->leave());
    }

    public function testACallOnABusyConnectionIsAMisuse(): void
    {
        $this->expectException(\Error::class);
        $this->expectExceptionMessage('running another statement');
        LinkState::Busy->enter();
    }

    public function testACallOnABrokenOrClosedConnectionIsAMisuse(): void
    {
        foreach ([LinkState::Broken, LinkState::Closed] as $state) {
            try {
                $state->enter();
                self::fail("{$state->name} let a call start");
            } catch (\Error $e) {
                self::assertStringContainsString('broken or closed', $e->getMessage());
            }
        }
    }

    public function testLeavingDoesNotMendAConnectionThatBrokeOrClosedDuringTheCall(): void
    {
        self::assertSame(LinkState::Broken, LinkState::Broken->leave());
        self::assertSame(LinkState::Closed, LinkState::Closed->leave());
    }
}
