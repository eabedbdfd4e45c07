<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Loop;

use function Kiln\Loop\async;

use Kiln\Loop\CancelledException;
use Kiln\Loop\DeferredCancellation;
use Kiln\Loop\Loop;

use function Kiln\Loop\read;
use function Kiln\Loop\readAll;
use function Kiln\Loop\readLine;

use Kiln\Loop\StreamException;

use function Kiln\Loop\write;

final class StreamIoTest extends LoopTestCase
{
    public function testReadSuspendsUntilAChunkArrivesAndReturnsNullAtTheEnd(): void
    {
        [$a, $b] = self::pair();
        Loop::delay(0.005, static fn() => \fwrite($b, 'chunk'));
        Loop::delay(0.01, static fn() => \fclose($b));
        $chunks = $this->inFiber(static fn() => [read($a), read($a)]);
        self::assertSame(['chunk', null], $chunks);
    }

    public function testReadAllCollectsEveryChunkUntilTheEnd(): void
    {
        [$a, $b] = self::pair();
        $writer = async(static function () use ($b): void {
            foreach (['one ', 'two ', 'three'] as $part) {
                write($b, $part);
                \Kiln\Loop\delay(0.001);
            }
            \fclose($b);
        });
        self::assertSame('one two three', $this->inFiber(static fn() => readAll($a)));
        $writer->await();
    }

    public function testReadLineStripsTheLineEndAndJoinsLinesSplitAcrossWrites(): void
    {
        [$a, $b] = self::pair();
        \fwrite($b, "first\r\nsec");
        Loop::delay(0.005, static fn() => \fwrite($b, "ond\nthird\nrest"));
        Loop::delay(0.01, static fn() => \fclose($b));
        $lines = $this->inFiber(static function () use ($a): array {
            $lines = [readLine($a), readLine($a), readLine($a)];
            $lines[] = read($a); // what readLine() buffered is not lost
            $lines[] = readLine($a);

            return $lines;
        });
        self::assertSame(['first', 'second', 'third', 'rest', null], $lines);
    }

    public function testALineLongerThanTheLimitIsAnError(): void
    {
        [$a, $b] = self::pair();
        \fwrite($b, \str_repeat('x', 100) . "\n");
        $this->expectException(StreamException::class);
        readLine($a, null, 10);
    }

    public function testWriteSuspendsWhileTheStreamIsFullUntilEverythingIsWritten(): void
    {
        [$a, $b] = self::pair();
        $data = \random_bytes(4 << 20);
        $reader = async(static fn() => readAll($b));
        $this->inFiber(static function () use ($a, $data): void {
            write($a, $data);
            \fclose($a);
        });
        self::assertTrue($reader->isComplete());
        self::assertSame(\md5($data), \md5($reader->await()));
    }

    public function testWritingToAClosedPeerFails(): void
    {
        [$a, $b] = self::pair();
        \fclose($b);
        $this->expectException(StreamException::class);
        write($a, \str_repeat('x', 1 << 20));
    }

    public function testAReadCanBeCancelled(): void
    {
        [$a, $b] = self::pair(); // $b stays open: no data, no end
        $cancellation = new DeferredCancellation();
        Loop::delay(0.005, static fn() => $cancellation->cancel());
        $caught = $this->inFiber(static function () use ($a, $cancellation): ?CancelledException {
            try {
                read($a, 100, $cancellation->getCancellation());
            } catch (CancelledException $e) {
                return $e;
            }

            return null;
        });
        self::assertInstanceOf(CancelledException::class, $caught);
        \fclose($b);
    }

    public function testAClosedStreamIsAnError(): void
    {
        [$a] = self::pair();
        \fclose($a);
        $this->expectException(StreamException::class);
        read($a);
    }

    /** @return array{resource, resource} */
    private static function pair(): array
    {
        $pair = \stream_socket_pair(\STREAM_PF_UNIX, \STREAM_SOCK_STREAM, \STREAM_IPPROTO_IP);
        self::assertIsArray($pair);

        return $pair;
    }

    /**
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
