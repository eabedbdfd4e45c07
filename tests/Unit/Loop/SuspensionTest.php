<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Loop;

use Kiln\Loop\Loop;

final class SuspensionTest extends LoopTestCase
{
    public function testResumeFromALoopCallbackDeliversTheValue(): void
    {
        $got = null;
        Loop::async(static function () use (&$got): void {
            $suspension = Loop::getSuspension();
            Loop::delay(0.001, static fn() => $suspension->resume('value'));
            $got = $suspension->suspend();
        });
        $this->runGuarded();
        self::assertSame('value', $got);
    }

    public function testThrowRaisesInsideTheSuspendedFiber(): void
    {
        $caught = null;
        Loop::async(static function () use (&$caught): void {
            $suspension = Loop::getSuspension();
            Loop::defer(static fn() => $suspension->throw(new \LogicException('thrown')));
            try {
                $suspension->suspend();
            } catch (\LogicException $e) {
                $caught = $e->getMessage();
            }
        });
        $this->runGuarded();
        self::assertSame('thrown', $caught);
    }

    public function testResumeFromAnotherFiberGoesThroughTheLoopNotANestedSwitch(): void
    {
        $order = [];
        $suspension = null;
        Loop::async(static function () use (&$order, &$suspension): void {
            $suspension = Loop::getSuspension();
            $order[] = 'a waits';
            $order[] = $suspension->suspend();
        });
        Loop::async(static function () use (&$order, &$suspension): void {
            \assert($suspension !== null);
            $suspension->resume('a resumed');
            $order[] = 'b continues';
        });
        $this->runGuarded();
        self::assertSame(['a waits', 'b continues', 'a resumed'], $order);
    }

    public function testResumeBeforeSuspendMakesSuspendReturnAtOnce(): void
    {
        $got = null;
        Loop::async(static function () use (&$got): void {
            $suspension = Loop::getSuspension();
            $suspension->resume(42);
            $got = $suspension->suspend();
        });
        self::assertSame(42, $got);
    }

    public function testResumingTwiceIsAnError(): void
    {
        $suspension = Loop::getSuspension();
        $suspension->resume();
        $this->expectException(\Error::class);
        $suspension->resume();
    }

    public function testSuspendInMainRunsTheLoopUntilResumed(): void
    {
        $suspension = Loop::getSuspension();
        Loop::delay(0.001, static fn() => $suspension->resume('from timer'));
        $guard = Loop::delay(2, static fn() => $suspension->throw(new \RuntimeException('guard fired')));
        Loop::unreference($guard);
        self::assertSame('from timer', $suspension->suspend());
        Loop::cancel($guard);
    }

    public function testSuspendInMainThrowsWhenNothingCanResumeIt(): void
    {
        $this->expectException(\Error::class);
        $this->expectExceptionMessage('before the suspension in {main} was resumed');
        Loop::getSuspension()->suspend();
    }

    public function testSuspendInMainFromALoopCallbackIsRefused(): void
    {
        $error = null;
        Loop::defer(static function () use (&$error): void {
            try {
                Loop::getSuspension()->suspend();
            } catch (\Error $e) {
                $error = $e->getMessage();
            }
        });
        $this->runGuarded();
        self::assertStringContainsString('inside a loop callback', (string) $error);
    }
}
