<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Loop;

use function Kiln\Loop\all;
use function Kiln\Loop\any;
use function Kiln\Loop\async;
use function Kiln\Loop\await;

use Kiln\Loop\CancelledException;
use Kiln\Loop\CompositeException;
use Kiln\Loop\Deferred;

use function Kiln\Loop\delay;

use Kiln\Loop\Future;
use Kiln\Loop\Loop;

use function Kiln\Loop\race;
use function Kiln\Loop\some;

use Kiln\Loop\TimeoutCancellation;
use Kiln\Loop\TimeoutException;
use Kiln\Loop\UnhandledFutureError;

final class AsyncTest extends LoopTestCase
{
    public function testAsyncRunsAtOnceUntilTheFirstSuspensionAndResolvesToTheReturnValue(): void
    {
        $steps = [];
        $future = async(static function (string $a, string $b) use (&$steps): string {
            $steps[] = 'started';
            delay(0.001);
            $steps[] = 'resumed';

            return $a . $b;
        }, 'x', 'y');
        self::assertSame(['started'], $steps);
        self::assertFalse($future->isComplete());
        $this->runGuarded();
        self::assertSame('xy', await($future));
        self::assertSame(['started', 'resumed'], $steps);
    }

    public function testAnExceptionOfTheJobIsThrownByAwait(): void
    {
        $future = async(static fn() => throw new \DomainException('bad'));
        self::assertTrue($future->isComplete());
        $this->expectExceptionObject(new \DomainException('bad'));
        $future->await();
    }

    public function testAllKeepsTheKeysAndOrderOfItsInputWhateverOrderTheyComplete(): void
    {
        $result = $this->inFiber(static fn() => all([
            'slow' => async(static fn() => (delay(0.03) ?? 1)),
            'fast' => async(static fn() => (delay(0.001) ?? 2)),
            'done' => Future::complete(3),
        ]));
        self::assertSame(['slow' => 1, 'fast' => 2, 'done' => 3], $result);
        self::assertSame([], all([]));
    }

    public function testAllRejectsWithTheFirstErrorWithoutWaitingForTheRest(): void
    {
        $late = new Deferred();
        $error = $this->inFiber(static function () use ($late): ?\Throwable {
            try {
                all([$late->getFuture(), async(static fn() => delay(0.001) ?? throw new \LogicException('first'))]);
            } catch (\LogicException $e) {
                return $e;
            }

            return null;
        });
        self::assertInstanceOf(\LogicException::class, $error);
        self::assertFalse($late->isComplete());
    }

    public function testACombinatorGivesUpWhenItsCancellationIsRequestedAndTheFuturesRunOn(): void
    {
        $slow = async(static fn() => (delay(0.05) ?? 'slow'));
        $caught = $this->inFiber(static function () use ($slow): ?CancelledException {
            try {
                all([$slow], new TimeoutCancellation(0.005));
            } catch (TimeoutException $e) {
                return $e;
            }

            return null;
        });
        self::assertInstanceOf(TimeoutException::class, $caught);
        self::assertSame('slow', $this->inFiber(static fn() => $slow->await()));
    }

    public function testAnyReturnsTheFirstSuccessAndIgnoresErrors(): void
    {
        $value = $this->inFiber(static fn() => any([
            async(static fn() => throw new \RuntimeException('no')),
            async(static fn() => (delay(0.02) ?? 'late')),
            async(static fn() => (delay(0.001) ?? 'early')),
        ]));
        self::assertSame('early', $value);
    }

    public function testAnyOfOnlyFailuresThrowsACompositeListingEveryError(): void
    {
        $error = $this->inFiber(static function (): ?CompositeException {
            try {
                any(['a' => async(static fn() => throw new \RuntimeException('one')), 'b' => Future::error(new \LogicException('two'))]);
            } catch (CompositeException $e) {
                return $e;
            }

            return null;
        });
        self::assertInstanceOf(CompositeException::class, $error);
        self::assertSame(['a', 'b'], array_keys($error->getErrors()));
        self::assertStringContainsString('[b] LogicException: two', $error->getMessage());
    }

    public function testSomeReturnsTheFirstCountSuccessesInCompletionOrder(): void
    {
        $values = $this->inFiber(static fn() => some([
            'a' => async(static fn() => (delay(0.03) ?? 'a')),
            'b' => async(static fn() => throw new \RuntimeException('b')),
            'c' => async(static fn() => (delay(0.001) ?? 'c')),
            'd' => async(static fn() => (delay(0.01) ?? 'd')),
        ], 2));
        self::assertSame(['c' => 'c', 'd' => 'd'], $values);
    }

    public function testSomeFailsAsSoonAsTheCountIsOutOfReach(): void
    {
        $pending = new Deferred();
        $this->expectException(CompositeException::class);
        some([$pending->getFuture(), Future::error(new \RuntimeException('x')), Future::error(new \RuntimeException('y'))], 2);
    }

    public function testSomeRejectsACountItCanNeverReach(): void
    {
        $this->expectException(\ValueError::class);
        some([Future::complete(1)], 2);
    }

    public function testRaceSettlesWithTheFirstOutcomeEvenAnError(): void
    {
        self::assertSame('fast', $this->inFiber(static fn() => race([
            async(static fn() => (delay(0.02) ?? 'slow')),
            async(static fn() => (delay(0.001) ?? 'fast')),
        ])));
        $this->expectExceptionMessage('first');
        race([async(static fn() => (delay(0.02) ?? 'slow')), async(static fn() => delay(0.001) ?? throw new \RuntimeException('first'))]);
    }

    public function testOnlyFuturesAreAccepted(): void
    {
        $this->expectException(\TypeError::class);
        all([Future::complete(1), 'not a future']); // @phpstan-ignore argument.type
    }

    public function testAnAsyncErrorNobodyObservesIsReportedToTheErrorHandler(): void
    {
        $reported = [];
        Loop::setErrorHandler(static function (\Throwable $e) use (&$reported): void {
            $reported[] = $e;
        });
        async(static fn() => throw new \RuntimeException('lost')); // dropped at once
        $awaited = async(static fn() => throw new \RuntimeException('seen'));
        $ignored = async(static fn() => throw new \RuntimeException('ignored'))->ignore();
        $deferred = new Deferred();
        $deferred->error(new \RuntimeException('deferred'));
        try {
            $awaited->await();
        } catch (\RuntimeException) {
        }
        unset($awaited, $ignored, $deferred);
        $this->runGuarded();
        self::assertCount(1, $reported);
        self::assertInstanceOf(UnhandledFutureError::class, $reported[0]);
        self::assertSame('lost', $reported[0]->getPrevious()?->getMessage());
    }

    public function testWithoutAnErrorHandlerAnUnhandledErrorLeavesRun(): void
    {
        async(static fn() => delay(0.001) ?? throw new \RuntimeException('lost'));
        $this->expectException(UnhandledFutureError::class);
        $this->runGuarded();
    }

    /**
     * Runs $fn in a Fiber and the loop until it is done; fails instead of hanging.
     *
     * @template T
     *
     * @param \Closure(): T $fn
     *
     * @return T
     */
    private function inFiber(\Closure $fn): mixed
    {
        $future = async($fn);
        $this->runGuarded();
        self::assertTrue($future->isComplete(), 'The Fiber did not finish');

        return $future->await();
    }
}
