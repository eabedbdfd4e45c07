<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Http;

use Kiln\Http\Internal\Output;
use Kiln\Http\WriteBatch;
use Kiln\Loop\Driver\SelectDriver;
use Kiln\Loop\Loop;
use PHPUnit\Framework\TestCase;

final class WriteBatchTest extends TestCase
{
    /** @var list<array{resource, resource}> */
    private array $pairs = [];

    private WriteBatch $batch;

    protected function setUp(): void
    {
        Loop::set(new SelectDriver());
        $this->batch = new WriteBatch(1.0);
    }

    protected function tearDown(): void
    {
        $this->batch->flush();
        foreach ($this->pairs as $pair) {
            foreach ($pair as $socket) {
                if (\is_resource($socket)) {
                    fclose($socket);
                }
            }
        }
    }

    public function testResponsesOfOneLoopTurnLeaveTogetherAtItsEnd(): void
    {
        [$a, $readA] = $this->newOutput();
        [$b, $readB] = $this->newOutput();
        $seen = [];
        Loop::defer(function () use ($a, $b, $readA, $readB, &$seen): void {
            $a->write('first ');
            $a->write('response');
            $b->write('second');
            $seen[] = [fread($readA, 100), fread($readB, 100), $this->batch->size()];
        });
        Loop::run();
        self::assertSame([['', '', 2]], $seen, 'nothing is written during the turn; each output is queued once');
        self::assertSame('first response', fread($readA, 100));
        self::assertSame('second', fread($readB, 100));
        self::assertSame(0, $a->pending() + $b->pending());
    }

    public function testAResponseQueuedPastTheHoldSendsTheBatchAtOnce(): void
    {
        $this->batch = new WriteBatch(0.0);
        [$a, $readA] = $this->newOutput();
        [$b, $readB] = $this->newOutput();
        $a->write('held');
        self::assertSame('', fread($readA, 100), 'the first of a batch waits');
        usleep(1000);
        $b->write('late');
        self::assertSame(['held', 'late'], [fread($readA, 100), fread($readB, 100)]);
        self::assertSame(0, $this->batch->size());
    }

    public function testALargeResponseIsWrittenAtOnceAndLeavesTheBatch(): void
    {
        [$small, $readSmall] = $this->newOutput();
        [$large, $readLarge] = $this->newOutput();
        $small->write('small');
        $large->write('head;');
        self::assertSame(2, $this->batch->size());
        $large->write(str_repeat('b', WriteBatch::LARGE));
        self::assertSame('head;bbb', fread($readLarge, 8), 'written when the queue reached WriteBatch::LARGE');
        self::assertSame('', fread($readSmall, 100), 'the small one still waits for the end of the turn');
        $this->batch->flush();
        self::assertSame('small', fread($readSmall, 100));
        [$file, $readFile] = $this->newOutput();
        $file->write(str_repeat('f', WriteBatch::LARGE));
        self::assertSame(0, $this->batch->size(), 'a large first write never enters the batch');
        self::assertSame('fff', fread($readFile, 3));
    }

    public function testAResponseStillGrowingPastTheHoldGoesOutAsItGrows(): void
    {
        $this->batch = new WriteBatch(0.0);
        [$stream, $read] = $this->newOutput();
        $stream->write('first chunk;');
        self::assertSame('', fread($read, 100));
        self::assertTrue($stream->isBatched());
        usleep(1000);
        $stream->write('second chunk');
        self::assertSame('first chunk;second chunk', fread($read, 100));
        self::assertFalse($stream->isBatched(), 'written: the write timeout applies from here');
    }

    public function testWhatTheKernelDoesNotTakeIsSentWhenTheSocketIsWritable(): void
    {
        [$output, $read] = $this->newOutput();
        $payload = str_repeat('x', 4 << 20);
        $output->write($payload);
        $this->batch->flush();
        self::assertGreaterThan(0, $output->pending(), 'a socket pair takes far less than 4 MiB at once');
        $received = '';
        $reader = Loop::onReadable($read, function () use ($read, &$received, &$reader): void {
            $received .= (string) fread($read, 1 << 20);
            if (\strlen($received) >= 4 << 20) {
                Loop::cancel($reader);
            }
        });
        Loop::run();
        self::assertSame(\strlen($payload), \strlen($received));
        self::assertSame(0, $output->pending());
    }

    public function testAFailedSocketReachesItsOwnerAtTheFlush(): void
    {
        $failed = 0;
        $output = null;
        [$output, $read] = $this->newOutput(function () use (&$output, &$failed): void {
            \assert($output instanceof Output);
            if (!$output->flush()) {
                $failed++;
                $output->release();
            }
        });
        fclose($read);
        $output->write('nobody reads this');
        self::assertSame(0, $failed, 'queued, not written yet');
        $this->batch->flush();
        self::assertSame(1, $failed);
        self::assertSame(0, $output->pending());
    }

    public function testAReleasedOutputInTheBatchIsSkipped(): void
    {
        [$a, $readA] = $this->newOutput();
        [$b, $readB] = $this->newOutput();
        $a->write('dropped');
        $b->write('kept');
        $a->release();
        $this->batch->flush();
        self::assertSame(['', 'kept'], [fread($readA, 100), fread($readB, 100)]);
    }

    /**
     * @param (\Closure(): void)|null $onWritable the owner's writable handler (default: flush)
     * @return array{Output, resource} the output and the socket that reads what it sends
     */
    private function newOutput(?\Closure $onWritable = null): array
    {
        $pair = stream_socket_pair(STREAM_PF_UNIX, STREAM_SOCK_STREAM, STREAM_IPPROTO_IP);
        self::assertIsArray($pair);
        stream_set_blocking($pair[0], false);
        stream_set_blocking($pair[1], false);
        $this->pairs[] = $pair;
        $output = null;
        $output = new Output($pair[0], 1024, $this->batch, $onWritable ?? function () use (&$output): void {
            \assert($output instanceof Output);
            $output->flush();
        });
        return [$output, $pair[1]];
    }
}
