<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Http\Internal;

use Kiln\Http\Internal\Output;
use Kiln\Http\WriteBatch;
use Kiln\Loop\Driver\SelectDriver;
use Kiln\Loop\Loop;
use PHPUnit\Framework\TestCase;

final class OutputTest extends TestCase
{
    /** @var list<resource> */
    private array $pair;

    protected function setUp(): void
    {
        Loop::set(new SelectDriver());
        $pair = stream_socket_pair(STREAM_PF_UNIX, STREAM_SOCK_STREAM, STREAM_IPPROTO_IP);
        self::assertIsArray($pair);
        stream_set_blocking($pair[0], false);
        stream_set_blocking($pair[1], false);
        $this->pair = $pair;
    }

    protected function tearDown(): void
    {
        foreach ($this->pair as $socket) {
            if (\is_resource($socket)) {
                fclose($socket);
            }
        }
    }

    public function testReleaseWakesTheFiberWaitingForDrainOnceAndItSeesTheConnectionGone(): void
    {
        $output = null;
        $output = new Output($this->pair[0], 1024, new WriteBatch(), function () use (&$output): void {
            \assert($output instanceof Output);
            $output->flush();
        });
        $results = [];
        Loop::async(function () use ($output, &$results): void {
            $output->write(str_repeat('x', 4 << 20)); // nobody reads the other end
            $results[] = $output->awaitDrain();
        });
        self::assertSame([], $results, 'the producer is paused');
        Loop::delay(0.05, static fn() => $output->release());
        Loop::run();
        self::assertSame([false], $results);
        self::assertSame(0, $output->pending());
        $output->write('after');
        self::assertSame(0, $output->pending(), 'writing after release is a no-op, not an error');
    }

    public function testAFiberWaitingForABodySourceIsWokenByReleaseAndNeverAgain(): void
    {
        $output = new Output($this->pair[0], 1024, new WriteBatch(), static function (): void {});
        $source = stream_socket_pair(STREAM_PF_UNIX, STREAM_SOCK_STREAM, STREAM_IPPROTO_IP);
        self::assertIsArray($source);
        $results = [];
        Loop::async(function () use ($output, $source, &$results): void {
            $results[] = $output->awaitReadable($source[0]);
        });
        Loop::delay(0.05, static fn() => $output->release());
        // Data on the source after the release must not resume the Fiber a second time.
        Loop::delay(0.1, static fn() => fwrite($source[1], 'late'));
        Loop::delay(0.2, static fn() => null);
        Loop::run();
        self::assertSame([false], $results);
        self::assertFalse($output->awaitReadable($source[0]), 'released: no wait at all');
    }

    public function testAFiberWaitingForABodySourceResumesWhenItIsReadable(): void
    {
        $output = new Output($this->pair[0], 1024, new WriteBatch(), static function (): void {});
        $source = stream_socket_pair(STREAM_PF_UNIX, STREAM_SOCK_STREAM, STREAM_IPPROTO_IP);
        self::assertIsArray($source);
        $results = [];
        Loop::async(function () use ($output, $source, &$results): void {
            $results[] = $output->awaitReadable($source[0]);
            $results[] = fread($source[0], 10);
        });
        Loop::delay(0.05, static fn() => fwrite($source[1], 'data'));
        Loop::run();
        self::assertSame([true, 'data'], $results);
    }
}
