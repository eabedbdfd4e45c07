<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Http\Internal;

use Kiln\Http\Internal\CoreState;
use Kiln\Http\Internal\HttpCore;
use Kiln\Http\Request;
use Kiln\Http\Response;
use Kiln\Loop\Loop;
use Kiln\Loop\Suspension;
use PHPUnit\Framework\Attributes\DataProvider;

final class HttpCoreTest extends CoreTestCase
{
    public function testARequestWrittenToTheStreamIsAnsweredOnIt(): void
    {
        $core = $this->core(static fn(Request $request): Response => Response::text('hello ' . $request->path()));
        $client = $this->connect($core);
        fwrite($client, self::request('/there'));
        $received = $this->receive($client, static fn(string $bytes): bool => str_ends_with($bytes, 'hello /there'));
        self::assertStringStartsWith("HTTP/1.1 200 OK\r\n", $received);
        self::assertSame(['hello /there'], self::bodies($received));
        self::assertSame(1, $this->context->served);
        self::assertSame(1, $core->connectionCount(), 'kept alive');
        self::assertSame(CoreState::Serving, $core->state());
    }

    public function testPipelinedRequestsAreAnsweredInTheOrderSentWhenAnEarlierOneTakesLonger(): void
    {
        $core = $this->core(static function (Request $request): Response {
            if ($request->path() === '/slow') {
                $suspension = Loop::getSuspension();
                Loop::delay(0.02, static fn() => $suspension->resume());
                $suspension->suspend();
            }
            return Response::text($request->path());
        });
        $client = $this->connect($core);
        fwrite($client, self::request('/slow') . self::request('/fast') . self::request('/last'));
        $received = $this->receive($client, static fn(string $bytes): bool => \count(self::bodies($bytes)) === 3);
        self::assertSame(['/slow', '/fast', '/last'], self::bodies($received));
        self::assertSame(3, $this->context->served);
    }

    public function testADrainClosesTheIdleConnectionAndServesTheBusyOneBeforeEnding(): void
    {
        /** @var list<Suspension> $waiting */
        $waiting = [];
        $core = $this->core(static function (Request $request) use (&$waiting): Response {
            if ($request->path() === '/busy') {
                $waiting[] = $suspension = Loop::getSuspension();
                $suspension->suspend();
            }
            return Response::text('done ' . $request->path());
        });
        $idle = $this->connect($core);
        fwrite($idle, self::request('/idle'));
        self::assertSame(['done /idle'], self::bodies($this->receive($idle, static fn(string $b): bool => str_ends_with($b, 'done /idle'))));
        $busy = $this->connect($core);
        fwrite($busy, self::request('/busy'));
        $this->runFor(5.0, static function () use (&$waiting): bool {
            return $waiting !== [];
        });
        self::assertCount(1, $waiting, 'the busy handler is running');

        $drained = 0;
        $core->startDraining(static function () use (&$drained): void {
            $drained++;
        });
        self::assertSame(CoreState::Draining, $core->state());
        self::assertTrue(self::closedByServer($idle), 'an idle keep-alive connection closes at once');
        self::assertSame(1, $core->connectionCount());
        self::assertSame(0, $drained, 'the busy connection is still open');

        $waiting[0]->resume();
        $received = $this->receive($busy, static fn(string $bytes): bool => false);
        self::assertSame(['done /busy'], self::bodies($received));
        self::assertStringContainsString("Connection: close\r\n", $received, 'no keep-alive once draining');
        self::assertSame(1, $drained);
        self::assertSame(CoreState::Stopped, $core->state(), 'a drain with nothing left stops the core');
        self::assertSame(0, $core->connectionCount());
    }

    public function testWindingDownEachConnectionClosesAfterItsNextResponseAndNewOnesAreStillServed(): void
    {
        $core = $this->core(static fn(Request $request): Response => Response::text('done ' . $request->path()));
        $kept = $this->connect($core);
        fwrite($kept, self::request('/first'));
        $first = $this->receive($kept, static fn(string $b): bool => str_ends_with($b, 'done /first'));
        self::assertStringNotContainsString('Connection: close', $first);

        $core->windDown();
        self::assertSame(CoreState::WindingDown, $core->state());
        self::assertSame(1, $core->connectionCount(), 'an idle connection is not closed under its client');
        fwrite($kept, self::request('/second'));
        $second = $this->receive($kept, static fn(string $bytes): bool => false);
        self::assertSame(['done /second'], self::bodies($second));
        self::assertStringContainsString("Connection: close\r\n", $second);
        self::assertTrue(self::closedByServer($kept));

        $fresh = $this->connect($core);
        fwrite($fresh, self::request('/fresh'));
        $third = $this->receive($fresh, static fn(string $bytes): bool => false);
        self::assertSame(['done /fresh'], self::bodies($third), 'a connection made while winding down is served');
        self::assertStringContainsString("Connection: close\r\n", $third);
        self::assertSame(0, $core->connectionCount());

        $drained = 0;
        $core->startDraining(static function () use (&$drained): void {
            $drained++;
        });
        self::assertSame(1, $drained);
        self::assertSame(CoreState::Stopped, $core->state());
    }

    public function testAResponseWhoseHeadKeptTheConnectionBeforeTheWindDownLeavesItOpen(): void
    {
        $core = $this->core(static fn(Request $request): Response => Response::text('done ' . $request->path()));
        $client = $this->connect($core);
        // The worker winds down as the response is counted (requestServed), after its head went out kept alive.
        $this->context->onServed = static function () use ($core): void {
            if ($core->state() === CoreState::Serving) {
                $core->windDown();
            }
        };
        fwrite($client, self::request('/last-kept'));
        $received = $this->receive($client, static fn(string $b): bool => str_ends_with($b, 'done /last-kept'));
        self::assertStringNotContainsString('Connection: close', $received);
        self::assertSame(CoreState::WindingDown, $core->state());
        self::assertFalse(self::closedByServer($client), 'a connection its response kept stays open');
        fwrite($client, self::request('/next'));
        $next = $this->receive($client, static fn(string $bytes): bool => false);
        self::assertSame(['done /next'], self::bodies($next));
        self::assertStringContainsString("Connection: close\r\n", $next);
    }

    public function testADrainWithAnIdleGraceAnswersARequestSentMeanwhileAndClosesTheRestWhenItEnds(): void
    {
        $core = $this->core(static fn(Request $request): Response => Response::text('done ' . $request->path()));
        $sending = $this->connect($core);
        $silent = $this->connect($core);
        foreach ([$sending, $silent] as $client) {
            fwrite($client, self::request('/first'));
            $this->receive($client, static fn(string $b): bool => str_ends_with($b, 'done /first'));
        }
        $drained = 0;
        $core->startDraining(static function () use (&$drained): void {
            $drained++;
        }, 0.2);
        self::assertSame(2, $core->connectionCount(), 'idle connections stay for the grace');
        self::assertFalse(self::closedByServer($sending));

        fwrite($sending, self::request('/sent-as-the-drain-began'));
        $answer = $this->receive($sending, static fn(string $bytes): bool => false);
        self::assertSame(['done /sent-as-the-drain-began'], self::bodies($answer));
        self::assertStringContainsString("Connection: close\r\n", $answer);
        self::assertSame(1, $core->connectionCount());
        self::assertSame(0, $drained, 'the silent connection is still in its grace');

        $started = microtime(true);
        $this->runFor(5.0, static function () use (&$drained): bool {
            return $drained === 1;
        });
        $took = microtime(true) - $started;
        self::assertSame(1, $drained);
        self::assertGreaterThan(0.1, $took, 'closed when the grace ends, not before');
        self::assertLessThan(2.0, $took, 'closed when the grace ends');
        self::assertTrue(self::closedByServer($silent));
        self::assertSame(CoreState::Stopped, $core->state());
    }

    public function testADrainWithNothingOpenEndsAtOnce(): void
    {
        $core = $this->core(static fn(): Response => Response::text('x'));
        $drained = 0;
        $core->startDraining(static function () use (&$drained): void {
            $drained++;
        });
        self::assertSame(1, $drained);
        self::assertSame(CoreState::Stopped, $core->state());
    }

    public function testADrainWaitsForTheLongLivedConnectionsRegistered(): void
    {
        $core = $this->core(static fn(): Response => Response::text('x'));
        $asked = [];
        $closedFirst = $core->addLongLived(static function (bool $graceful) use (&$asked): void {
            $asked[] = ['first', $graceful];
        });
        $drained = 0;
        $core->startDraining(static function () use (&$drained): void {
            $drained++;
        });
        self::assertSame([['first', true]], $asked, 'asked to close gracefully');
        $closedLate = $core->addLongLived(static function (bool $graceful) use (&$asked): void {
            $asked[] = ['late', $graceful];
        });
        self::assertSame([['first', true], ['late', true]], $asked, 'one registered during the drain is asked at once');
        $closedFirst();
        self::assertSame(0, $drained, 'one is still open');
        self::assertSame(CoreState::Draining, $core->state());
        $closedLate();
        self::assertSame(1, $drained);
        self::assertSame(CoreState::Stopped, $core->state());
    }

    public function testStopClosesEverythingAtOnceAndTheDrainNeverReportsEmpty(): void
    {
        $waiting = null;
        $core = $this->core(static function () use (&$waiting): Response {
            $waiting = Loop::getSuspension();
            $waiting->suspend();
            return Response::text('never sent');
        });
        $client = $this->connect($core);
        fwrite($client, self::request('/busy'));
        $this->runFor(5.0, static function () use (&$waiting): bool {
            return $waiting !== null;
        });
        $asked = [];
        $core->addLongLived(static function (bool $graceful) use (&$asked): void {
            $asked[] = $graceful;
        });
        $drained = 0;
        $core->startDraining(static function () use (&$drained): void {
            $drained++;
        });
        $core->stop();
        self::assertSame(CoreState::Stopped, $core->state());
        self::assertSame(0, $core->connectionCount());
        self::assertTrue(self::closedByServer($client));
        self::assertSame([true, false], $asked, 'asked gracefully by the drain, then at once by the stop');
        self::assertSame(0, $drained);
    }

    public function testOnceFinishingAResponseUnderWayClosesItsConnectionAndNoPipelinedRequestStarts(): void
    {
        $waiting = null;
        $core = $this->core(static function (Request $request) use (&$waiting): Response {
            if ($request->path() !== '/stream') {
                return Response::text('pipelined answered');
            }
            return new Response(200, ['Content-Type' => 'text/plain'], (static function () use (&$waiting): \Generator {
                yield 'part one;';
                $waiting = Loop::getSuspension();
                $waiting->suspend();
                yield 'part two';
            })());
        });
        $client = $this->connect($core);
        fwrite($client, self::request('/stream') . self::request('/pipelined'));
        $this->runFor(5.0, static function () use (&$waiting): bool {
            return $waiting !== null;
        });
        $finished = 0;
        $core->finishLastResponses(static function () use (&$finished): void {
            $finished++;
        });
        self::assertSame(CoreState::Finishing, $core->state());
        \assert($waiting instanceof Suspension);
        $waiting->resume();
        $received = $this->receive($client, static fn(string $bytes): bool => false);
        self::assertStringContainsString("Transfer-Encoding: chunked\r\n", $received);
        self::assertStringNotContainsString('Connection: close', $received, 'kept alive when its head was sent');
        self::assertStringEndsWith("8\r\npart two\r\n0\r\n\r\n", $received, 'finished, and nothing after it');
        self::assertTrue(feof($client), 'closed once its response was out');
        self::assertSame(1, $finished);
        self::assertSame(1, $core->lastResponsesWritten());
        self::assertSame(CoreState::Stopped, $core->state());
    }

    public function testAFinishingCoreTakesNoNewConnection(): void
    {
        $core = $this->core(static fn(): Response => Response::text('x'));
        $this->connect($core);
        $core->finishLastResponses(static function (): void {});
        $this->expectException(\Error::class);
        $this->expectExceptionMessage('The HTTP core is finishing: it takes no new connection');
        $this->connect($core);
    }

    /** @return iterable<string, array{\Closure(HttpCore): void, \Closure(HttpCore): void, string}> */
    public static function illegalOperations(): iterable
    {
        $drain = static function (HttpCore $core): void {
            $core->startDraining(static function (): void {}, 5.0); // a grace: a connection that is idle keeps it draining
        };
        $finish = static function (HttpCore $core): void {
            $core->finishLastResponses(static function (): void {});
        };
        $stop = static function (HttpCore $core): void {
            $core->stop();
        };
        yield 'draining twice' => [$drain, $drain, 'from draining to draining'];
        yield 'draining while finishing' => [$finish, $drain, 'from finishing to draining'];
        yield 'finishing twice' => [$finish, $finish, 'from finishing to finishing'];
        yield 'draining once stopped' => [$stop, $drain, 'from stopped to draining'];
        yield 'finishing once stopped' => [$stop, $finish, 'from stopped to finishing'];
        yield 'stopping twice' => [$stop, $stop, 'from stopped to stopped'];
    }

    /**
     * @param \Closure(HttpCore): void $first
     * @param \Closure(HttpCore): void $then
     */
    #[DataProvider('illegalOperations')]
    public function testAnOperationItsStateDoesNotAllowThrowsAndChangesNothing(\Closure $first, \Closure $then, string $message): void
    {
        $core = $this->core(static fn(): Response => Response::text('x'));
        $this->connect($core); // keeps a drain or a finish from ending at once
        $first($core);
        $before = $core->state();
        try {
            $then($core);
            self::fail('no \Error thrown');
        } catch (\Error $e) {
            self::assertStringContainsString("The HTTP core cannot go $message", $e->getMessage());
        }
        self::assertSame($before, $core->state());
    }
}
