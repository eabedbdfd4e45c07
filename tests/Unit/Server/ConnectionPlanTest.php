<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Server;

use Kiln\Server\ConnectionPlan;
use Kiln\Server\ServerException;
use PHPUnit\Framework\TestCase;

final class ConnectionPlanTest extends TestCase
{
    private const NO_FFI = 'the FFI extension (php-ffi) is not loaded';

    public function testWithFfiTheDefaultIsEpollWithTenThousandConnectionsAndTheOpenFilesTheyNeed(): void
    {
        $plan = ConnectionPlan::decide('auto', null, 256, null, 1024, 1_048_576);

        self::assertSame('epoll', $plan->driver);
        self::assertSame(10_000, $plan->connections);
        // Each connection one descriptor, each of the 256 requests that may run 4 more, the worker's own 64.
        self::assertSame(10_000 + 256 * 4 + 64, $plan->openFiles);
        self::assertStringContainsString('raised from 1024 to 11088', $plan->describe());
    }

    public function testALimitHighEnoughAlreadyIsLeftAsItIs(): void
    {
        $plan = ConnectionPlan::decide('auto', null, 256, null, 65_536, 65_536);

        self::assertSame(10_000, $plan->connections);
        self::assertNull($plan->openFiles);
    }

    public function testTheHardLimitCapsTheConnectionsAndTheReasonSaysHowToRaiseIt(): void
    {
        $plan = ConnectionPlan::decide('auto', null, 256, null, 1024, 4096);

        self::assertSame(4096, $plan->openFiles);
        self::assertSame(4096 - 64 - 256 * 4, $plan->connections);
        self::assertStringContainsString('ulimit -Hn', $plan->reason);
    }

    public function testUnderATinyHardLimitRequestsKeepAtMostHalfOfTheDescriptors(): void
    {
        $plan = ConnectionPlan::decide('auto', null, 256, null, 512, 1024);

        self::assertSame(1024, $plan->openFiles);
        self::assertSame(intdiv(1024 - 64, 2), $plan->connections);
    }

    public function testConnectionsAskedForAreTakenWithTheDescriptorsTheyNeed(): void
    {
        $plan = ConnectionPlan::decide('auto', 50_000, 100, null, 1024, 1_048_576);

        self::assertSame(50_000, $plan->connections);
        self::assertSame(50_000 + 100 * 4 + 64, $plan->openFiles);
    }

    public function testWithoutFfiTheSelectDriverKeepsItsSafeDefaultAndSaysWhy(): void
    {
        $plan = ConnectionPlan::decide('auto', null, 256, self::NO_FFI, 1024, 1_048_576);

        self::assertSame('select', $plan->driver);
        self::assertSame(512, $plan->connections);
        self::assertNull($plan->openFiles);
        self::assertStringContainsString(self::NO_FFI, $plan->describe());
    }

    public function testDriverSelectIsHonouredWhereEpollCouldRun(): void
    {
        $plan = ConnectionPlan::decide('select', 700, 256, null, 1024, 1_048_576);

        self::assertSame(['select', 700, null], [$plan->driver, $plan->connections, $plan->openFiles]);
        self::assertStringContainsString('--driver=select', $plan->reason);
    }

    public function testMoreConnectionsThanTheSelectDriverWatchesAreCappedInThePlanWithTheWayToMore(): void
    {
        $chosen = ConnectionPlan::decide('select', 2000, 256, null, 1024, 1_048_576);
        self::assertSame(['select', 960], [$chosen->driver, $chosen->connections], 'the start-up line gives the cap the workers keep');
        self::assertStringContainsString('--connections=2000 capped at 960; leave out --driver=select (the epoll driver) for more', $chosen->describe());
        self::assertStringNotContainsString('php-ffi', $chosen->describe(), 'FFI is there: the advice is the driver option');

        $forced = ConnectionPlan::decide('auto', 2000, 256, self::NO_FFI, 1024, 1_048_576);
        self::assertSame(960, $forced->connections);
        self::assertStringContainsString('capped at 960; install php-ffi (the epoll driver) for more', $forced->describe());
    }

    public function testDriverEpollWithoutFfiIsAStartUpError(): void
    {
        $this->expectException(ServerException::class);
        $this->expectExceptionMessage('--driver=epoll cannot run: ' . self::NO_FFI);

        ConnectionPlan::decide('epoll', null, 256, self::NO_FFI, 1024, 1_048_576);
    }

    public function testAnUnknownOpenFilesLimitIsNotTouched(): void
    {
        $plan = ConnectionPlan::decide('epoll', null, 256, null, null, null);

        self::assertSame(['epoll', 10_000, null], [$plan->driver, $plan->connections, $plan->openFiles]);
    }
}
