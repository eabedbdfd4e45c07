<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Server;

use Kiln\Server\SupervisorState;
use Kiln\Server\WorkerState;
use PHPUnit\Framework\TestCase;

final class StateTest extends TestCase
{
    public function testAWorkerLivesBootingReadyDrainingExited(): void
    {
        $state = WorkerState::Booting->to(WorkerState::Ready)->to(WorkerState::Draining)->to(WorkerState::Exited);
        self::assertSame(WorkerState::Exited, $state);
    }

    public function testAnExitedWorkerCannotComeBack(): void
    {
        $this->expectException(\LogicException::class);
        WorkerState::Exited->to(WorkerState::Ready);
    }

    public function testADrainingWorkerCannotServeAgain(): void
    {
        $this->expectException(\LogicException::class);
        WorkerState::Draining->to(WorkerState::Ready);
    }

    public function testTheSupervisorStopsOnlyForward(): void
    {
        self::assertSame(SupervisorState::Stopped, SupervisorState::Running->to(SupervisorState::Draining)
            ->to(SupervisorState::Stopping)->to(SupervisorState::Stopped));
        $this->expectException(\LogicException::class);
        SupervisorState::Stopping->to(SupervisorState::Running);
    }
}
