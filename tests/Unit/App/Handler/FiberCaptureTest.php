<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\App\Handler;

use Kiln\App\Handler\OutputCapture;

/**
 * Captures made in Fibers, as the server makes them: the first capture open takes OutputCapture's slot, the
 * ones begun while it is open take the WeakMap. Output must still reach the right capture, or pass through.
 */
final class FiberCaptureTest extends InvokerTestCase
{
    public function testAFiberThatIsNotCapturingPassesItsOutputThroughWhileAnotherFiberCaptures(): void
    {
        ob_start();
        $response = null;
        $capturing = new \Fiber(function () use (&$response): void {
            $response = $this->invoke(static function (): string {
                echo 'mine-before;';
                \Fiber::suspend();
                echo 'mine-after;';
                return 'returned';
            });
        });
        $timer = new \Fiber(static function (): void {
            echo 'timer;';
        });
        $capturing->start();
        $timer->start();
        echo 'main;';
        $capturing->resume();
        OutputCapture::instance()->uninstall();

        self::assertSame('timer;main;', ob_get_clean());
        self::assertNotNull($response);
        self::assertSame('mine-before;mine-after;returned', self::body($response));
    }

    public function testANestedInvocationInAFiberKeepsEachLevelsOutputApart(): void
    {
        $response = null;
        $fiber = new \Fiber(function () use (&$response): void {
            $response = $this->invoke(function (): string {
                echo 'outer-before;';
                $inner = $this->invoke(static function (): void {
                    echo 'inner;';
                });
                echo 'outer-after;';
                return '[' . self::body($inner) . ']';
            });
        });
        $fiber->start();

        self::assertNotNull($response);
        self::assertSame('outer-before;outer-after;[inner;]', self::body($response));
    }

    public function testAFiberCapturingWhileAnEarlierOneIsSuspendedGetsOnlyItsOwnOutput(): void
    {
        $responses = [];
        $fibers = [];
        foreach (['first', 'second', 'third'] as $name) {
            $fibers[$name] = new \Fiber(function () use ($name, &$responses): void {
                $responses[$name] = $this->invoke(static function () use ($name): void {
                    echo "$name-1;";
                    \Fiber::suspend();
                    echo "$name-2;";
                });
            });
        }
        // first starts (the slot) and suspends; second starts; first ends while second is still open;
        // third starts while second is open; then second and third end
        $fibers['first']->start();
        $fibers['second']->start();
        $fibers['first']->resume();
        $fibers['third']->start();
        $fibers['second']->resume();
        $fibers['third']->resume();

        self::assertSame('first-1;first-2;', self::body($responses['first']));
        self::assertSame('second-1;second-2;', self::body($responses['second']));
        self::assertSame('third-1;third-2;', self::body($responses['third']));
    }

    public function testCapturesStillNestWhenTheFirstOpenOneEndsBeforeTheOthers(): void
    {
        $responses = [];
        $slot = new \Fiber(function () use (&$responses): void {
            $responses['slot'] = $this->invoke(static function (): void {
                echo 'slot;';
                \Fiber::suspend();
            });
        });
        // begun while the first capture is open; later nests a capture of its own once that one has ended
        $outer = new \Fiber(function () use (&$responses): void {
            $responses['outer'] = $this->invoke(function () use (&$responses): string {
                echo 'outer-1;';
                \Fiber::suspend();
                $responses['inner'] = $this->invoke(static function (): void {
                    echo 'inner-1;';
                    \Fiber::suspend();
                    echo 'inner-2;';
                });
                echo 'outer-2;';
                return 'returned';
            });
        });
        // begun once the first has ended while the others are open: it may take the first one's place
        $late = new \Fiber(function () use (&$responses): void {
            $responses['late'] = $this->invoke(static function (): void {
                echo 'late-1;';
                \Fiber::suspend();
                echo 'late-2;';
            });
        });
        $slot->start();
        $outer->start();
        $slot->resume();
        $outer->resume();
        $late->start();
        $outer->resume();
        $late->resume();

        self::assertSame('slot;', self::body($responses['slot']));
        self::assertSame('inner-1;inner-2;', self::body($responses['inner']));
        self::assertSame('outer-1;outer-2;returned', self::body($responses['outer']));
        self::assertSame('late-1;late-2;', self::body($responses['late']));
    }

    public function testABufferANestedHandlerLeftOpenInAFiberIsFlushedIntoThatHandlersResponse(): void
    {
        $responses = [];
        $fiber = new \Fiber(function () use (&$responses): void {
            $responses['outer'] = $this->invoke(function () use (&$responses): string {
                echo 'outer;';
                $responses['inner'] = $this->invoke(static function (): void {
                    echo 'inner;';
                    ob_start();
                    echo 'left open;';
                });
                return 'returned';
            });
        });
        $fiber->start();

        self::assertSame('inner;left open;', self::body($responses['inner']));
        self::assertSame('outer;returned', self::body($responses['outer']));
    }

    public function testAFiberDestroyedWhileSuspendedInAHandlerFreesTheCaptureForTheNextRequest(): void
    {
        $fiber = new \Fiber(function (): void {
            $this->invoke(static function (): void {
                echo 'abandoned;';
                \Fiber::suspend();
            });
        });
        $fiber->start();
        unset($fiber); // unwinds the handler, which ends no capture: the next begin() frees the slot

        $response = null;
        $next = new \Fiber(function () use (&$response): void {
            $response = $this->invoke(static function (): void {
                echo 'next;';
            });
        });
        $next->start();

        self::assertNotNull($response);
        self::assertSame('next;', self::body($response));
    }

    public function testAFiberThatDoesNotCaptureIsNeverMistakenForADestroyedOneThatDid(): void
    {
        ob_start();
        $fiber = new \Fiber(function (): void {
            $this->invoke(static function (): void {
                echo 'abandoned;';
                \Fiber::suspend();
            });
        });
        $fiber->start();
        unset($fiber);
        // New Fibers, not capturing, likely at the destroyed one's address and object id.
        for ($i = 0; $i < 3; $i++) {
            (new \Fiber(static function () use ($i): void {
                echo "timer $i;";
            }))->start();
        }
        $response = $this->invoke(static fn(): string => 'main');
        OutputCapture::instance()->uninstall();

        self::assertSame('timer 0;timer 1;timer 2;', ob_get_clean());
        self::assertSame('main', self::body($response));
    }

    public function testAFiberServingRequestAfterRequestCapturesEachOnlyWhileItsHandlerRuns(): void
    {
        ob_start();
        $bodies = [];
        $connection = new \Fiber(function () use (&$bodies): void {
            for ($i = 1; $i <= 3; $i++) {
                $bodies[] = self::body($this->invoke(static function () use ($i): string {
                    echo "request $i;";
                    return 'returned;';
                }));
                \Fiber::suspend();
                echo "between $i;"; // the Fiber's own output, outside any capture
            }
        });
        $other = new \Fiber(function () use (&$bodies): void {
            $bodies[] = self::body($this->invoke(static function (): string {
                echo 'other-before;';
                \Fiber::suspend();
                echo 'other-after;';
                return 'returned;';
            }));
        });
        $connection->start();
        $other->start(); // takes the capture slot the connection's Fiber held last, and keeps it while suspended
        $connection->resume();
        $other->resume();
        $connection->resume();
        $connection->resume();
        OutputCapture::instance()->uninstall();

        self::assertSame('between 1;between 2;between 3;', ob_get_clean());
        self::assertSame(['request 1;returned;', 'request 2;returned;', 'other-before;other-after;returned;', 'request 3;returned;'], $bodies);
    }
}
