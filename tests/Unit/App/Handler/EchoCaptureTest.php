<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\App\Handler;

use Kiln\App\Handler\OutputCapture;
use Kiln\Http\Response;
use Kiln\Loop\Driver\SelectDriver;
use Kiln\Loop\Loop;
use PHPUnit\Framework\Attributes\DataProvider;

final class EchoCaptureTest extends InvokerTestCase
{
    public function testEchoedOutputWithNullReturnIsTheHtmlBody(): void
    {
        $response = $this->invoke(static function (): void {
            echo '<p>', 'hi', '</p>';
            print '!';
            printf('%d', 7);
        });

        self::assertSame(200, $response->status());
        self::assertSame('text/html; charset=utf-8', $response->header('Content-Type'));
        self::assertSame('<p>hi</p>!7', self::body($response));
    }

    /** @return iterable<string, array{mixed, string}> */
    public static function echoThenReturn(): iterable
    {
        yield 'string' => ['body', 'echo:body'];
        yield 'array' => [['a' => 1], 'echo:{"a":1}'];
        yield 'Response with a string body' => [Response::text('text'), 'echo:text'];
        yield 'int status' => [404, 'echo:'];
    }

    #[DataProvider('echoThenReturn')]
    public function testEchoedOutputGoesBeforeTheReturnedBody(mixed $returned, string $wire): void
    {
        $response = $this->invoke(static function () use ($returned): mixed {
            echo 'echo:';
            return $returned;
        });
        self::assertSame($wire, self::body($response));
    }

    public function testAnEchoWithA204IsDroppedBecauseA204HasNoBody(): void
    {
        $response = $this->invoke(static function (): int {
            echo 'lost';
            return 204;
        });
        self::assertSame(204, $response->status());
        self::assertSame('', self::body($response));
    }

    public function testEchoedOutputIsTheFirstChunkOfAStreamedReturn(): void
    {
        $response = $this->invoke(static function (): \Generator {
            echo 'head;';
            return (static function () {
                yield 'a';
                yield 'b';
            })();
        });
        self::assertSame(['head;', 'a', 'b'], self::chunks($response));
    }

    public function testEchoedOutputIsTheFirstChunkOfAResponseWithAStreamedBody(): void
    {
        $response = $this->invoke(static function (): Response {
            echo 'head;';
            return new Response(200, [], new \ArrayIterator(['a', 'b']));
        });
        self::assertSame(['head;', 'a', 'b'], self::chunks($response));
    }

    public function testEchoedOutputDropsTheContentLengthTheHandlerSetForItsBody(): void
    {
        $response = $this->invoke(static function (): Response {
            echo 'head;';
            return new Response(200, ['Content-Length' => '2'], new \ArrayIterator(['a', 'b']));
        });
        self::assertSame(['head;', 'a', 'b'], self::chunks($response));
        self::assertNull($response->declaredLength(), 'the body is longer than the handler said: it must not be cut there');
    }

    public function testEchoedOutputIsPrependedToAResponseWithAStreamBody(): void
    {
        $stream = fopen('php://memory', 'w+');
        self::assertIsResource($stream);
        fwrite($stream, 'file');
        rewind($stream);
        $response = $this->invoke(static function () use ($stream): Response {
            echo 'head;';
            return new Response(200, [], $stream);
        });
        self::assertSame('head;file', self::body($response));
    }

    public function testEchoesWhileAGeneratorStreamsAreSentAsChunksInOrder(): void
    {
        $response = $this->invoke(static function (): \Generator {
            echo '<ul>';
            yield '<li>1</li>';
            echo '<!-- between -->';
            yield '<li>2</li>';
            echo '</ul>';
        });
        self::assertSame(['<ul>', '<li>1</li>', '<!-- between -->', '<li>2</li>', '</ul>'], self::chunks($response));
    }

    public function testTwoInterleavedFibersEachGetOnlyTheirOwnOutput(): void
    {
        $responses = [];
        $fibers = [];
        foreach (['a', 'b'] as $name) {
            $fibers[$name] = new \Fiber(function () use ($name, &$responses): void {
                $responses[$name] = $this->invoke(static function () use ($name): void {
                    echo "$name-before;";
                    \Fiber::suspend();
                    echo "$name-after;";
                });
            });
        }
        // a echoes, suspends; b echoes, suspends; the main context echoes; a finishes; b finishes
        // (no ob_start() here: a buffer opened above the capture's would take every Fiber's output)
        $this->expectOutputString('main;');
        $fibers['a']->start();
        $fibers['b']->start();
        echo 'main;';
        $fibers['a']->resume();
        $fibers['b']->resume();
        OutputCapture::instance()->uninstall(); // PHPUnit checks the output before tearDown()

        self::assertSame('a-before;a-after;', self::body($responses['a']));
        self::assertSame('b-before;b-after;', self::body($responses['b']));
    }

    public function testConcurrentRequestsOnTheLoopEachGetOnlyTheirOwnOutput(): void
    {
        Loop::set(new SelectDriver());
        $bodies = [];
        // the first to start finishes first: captures do not nest like a stack here
        foreach (['fast' => 0.005, 'slow' => 0.02, 'none' => 0.0] as $name => $wait) {
            Loop::async(function () use ($name, $wait, &$bodies): void {
                $response = $this->invoke(static function () use ($name, $wait): string {
                    echo "$name:1;";
                    if ($wait > 0) {
                        \Kiln\Loop\delay($wait);
                    }
                    echo "$name:2;";
                    return "$name:returned";
                });
                $bodies[$name] = self::body($response);
            });
        }
        Loop::run();

        self::assertSame([
            'none' => 'none:1;none:2;none:returned',
            'fast' => 'fast:1;fast:2;fast:returned',
            'slow' => 'slow:1;slow:2;slow:returned',
        ], $bodies);
    }

    public function testOutputOutsideAnyCaptureIsPassedThroughNotSwallowed(): void
    {
        ob_start();
        $this->invoke(static fn() => 'installs the capture');
        echo 'main;';
        $fiber = new \Fiber(static function (): void {
            echo 'fiber;';
        });
        $fiber->start();
        OutputCapture::instance()->uninstall();
        self::assertSame('main;fiber;', ob_get_clean());
    }

    public function testAFiberThatCapturedBeforePassesItsLaterOutputThrough(): void
    {
        ob_start();
        $responses = [];
        // like a pooled Fiber: one request, then output outside any capture, then the next request
        $fiber = new \Fiber(function () use (&$responses): void {
            $responses[] = $this->invoke(static function (): void {
                echo 'first;';
            });
            echo 'between;';
            \Fiber::suspend();
            $responses[] = $this->invoke(static function (): void {
                echo 'second;';
                ob_start();
                echo 'left open;';
            });
        });
        // another Fiber that captured once and is still alive: it must not count as an open capture
        $other = new \Fiber(function (): void {
            $this->invoke(static fn() => 'done');
            \Fiber::suspend();
        });
        $fiber->start();
        $other->start();
        $fiber->resume();
        OutputCapture::instance()->uninstall();

        self::assertSame('between;', ob_get_clean());
        self::assertSame(['first;', 'second;left open;'], array_map(self::body(...), $responses));
    }

    public function testAHandlerThatThrowsLeavesNoOutputBehind(): void
    {
        try {
            $this->invoke(static function (): never {
                echo 'half a page';
                throw new \RuntimeException('boom');
            });
            self::fail('no exception');
        } catch (\RuntimeException $e) { // fail()'s AssertionFailedError is one too: the message tells them apart
            self::assertSame('boom', $e->getMessage());
        }
        self::assertSame('next', self::body($this->invoke(static fn() => 'next')));
    }

    public function testANestedInvocationKeepsEachLevelsOutputApart(): void
    {
        $response = $this->invoke(function (): string {
            echo 'outer-before;';
            $inner = $this->invoke(static function (): void {
                echo 'inner;';
            });
            echo 'outer-after;';
            return '[' . self::body($inner) . ']';
        });
        self::assertSame('outer-before;outer-after;[inner;]', self::body($response));
    }

    public function testABufferTheHandlerOpenedAndClosedStaysItsOwn(): void
    {
        $response = $this->invoke(static function (): string {
            ob_start();
            echo 'template';
            $html = (string) ob_get_clean();
            echo 'echo;';
            return strtoupper($html);
        });
        self::assertSame('echo;TEMPLATE', self::body($response));
    }

    public function testABufferTheHandlerLeftOpenIsFlushedIntoItsResponse(): void
    {
        $response = $this->invoke(static function (): void {
            echo 'a;';
            ob_start();
            echo 'left open;';
        });
        self::assertSame('a;left open;', self::body($response));
    }

    public function testTheCaptureIsReinstalledAfterAHandlerEndsItsBuffer(): void
    {
        $this->invoke(static function (): string {
            ob_end_clean(); // ends the capture's buffer, not one of its own
            return '';
        });
        self::assertSame('captured', self::body($this->invoke(static function (): void {
            echo 'captured';
        })));
    }

}
