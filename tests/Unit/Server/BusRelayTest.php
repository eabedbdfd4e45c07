<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Server;

use Kiln\Server\BusRelay;
use Kiln\Server\Log;
use Kiln\Server\LogFile;
use Kiln\Server\RelayFrames;
use PHPUnit\Framework\TestCase;

/** The supervisor's relay, on socket pairs: the test holds each worker's end. */
final class BusRelayTest extends TestCase
{
    private string $log;

    /** @var array<int, resource> pid => the worker's end */
    private array $workers = [];

    protected function setUp(): void
    {
        $this->log = (string) tempnam(sys_get_temp_dir(), 'kiln-relay-log-');
    }

    protected function tearDown(): void
    {
        @unlink($this->log);
    }

    public function testAFrameGoesWholeToEveryOtherWorkerAndNeverBackToItsSender(): void
    {
        $relay = $this->relay([101, 102, 103]);
        fwrite($this->workers[101], RelayFrames::encode('from 101'));
        $relay->read(101);
        self::assertSame(['from 101'], $this->receive(102));
        self::assertSame(['from 101'], $this->receive(103));
        self::assertSame([], $this->receive(101));
        self::assertSame(1, $relay->relayed());
    }

    public function testFramesOfTwoPublishersStayWholeAndInEachPublishersOrder(): void
    {
        $relay = $this->relay([1, 2, 3]);
        $one = RelayFrames::encode('1a') . RelayFrames::encode('1b') . RelayFrames::encode('1c');
        $two = RelayFrames::encode('2a') . RelayFrames::encode('2b');
        // Split mid-frame: the relay holds a part until its frame is whole.
        fwrite($this->workers[1], substr($one, 0, 9));
        fwrite($this->workers[2], $two);
        $relay->read(1);
        $relay->read(2);
        fwrite($this->workers[1], substr($one, 9));
        $relay->read(1);
        self::assertSame(['1a', '2a', '2b', '1b', '1c'], $this->receive(3));
        self::assertSame(['2a', '2b'], $this->receive(1));
        self::assertSame(['1a', '1b', '1c'], $this->receive(2));
    }

    public function testAWorkerThatIsGoneIsDroppedAndTheOthersStillGetEverything(): void
    {
        $relay = $this->relay([1, 2, 3]);
        fclose($this->workers[3]);
        unset($this->workers[3]);
        fwrite($this->workers[1], RelayFrames::encode('x'));
        $relay->read(1);
        $relay->read(3); // end of file: detached
        fwrite($this->workers[1], RelayFrames::encode('y'));
        $relay->read(1);
        self::assertSame(['x', 'y'], $this->receive(2));
        self::assertArrayNotHasKey(3, $relay->readable());
    }

    public function testAWorkerThatDoesNotReadLosesWhatPassesItsQueueAndTheLossIsLogged(): void
    {
        $relay = $this->relay([1, 2], queueLimit: 100_000);
        $frames = 0;
        for ($i = 0; $i < 100; $i++) {
            fwrite($this->workers[1], RelayFrames::encode(str_repeat('z', 10_000)));
            $relay->read(1);
            $frames++;
        }
        self::assertNotEmpty($relay->writable(), 'bytes wait for worker 2');
        $got = \count($this->receive(2));
        self::assertGreaterThan(0, $got);
        self::assertLessThan($frames, $got, 'what passed the queue (and the socket buffer) was dropped');
        self::assertMatchesRegularExpression('~node bus: \d+ message\(s\) lost for worker pid 2~', (string) file_get_contents($this->log));
    }

    public function testAFrameOverTheBoundCutsItsWriterOffTheBus(): void
    {
        $relay = $this->relay([1, 2], maxBody: 1000);
        fwrite($this->workers[1], pack('N', 5000));
        $relay->read(1);
        self::assertSame([2], array_keys($relay->readable()));
        self::assertStringContainsString('worker pid 1 is cut off the node bus', (string) file_get_contents($this->log));
    }

    public function testAForkedWorkerForgetsTheSupervisorsEnds(): void
    {
        $relay = $this->relay([1, 2]);
        $ends = $relay->readable();
        $relay->forget();
        self::assertSame([], $relay->readable());
        foreach ($ends as $end) {
            self::assertFalse(\is_resource($end), 'closed');
        }
    }

    /** @param list<int> $pids */
    private function relay(array $pids, int $queueLimit = BusRelay::QUEUE_LIMIT, int $maxBody = RelayFrames::MAX_BODY): BusRelay
    {
        $relay = new BusRelay(new Log(new LogFile($this->log)), $queueLimit, $maxBody);
        foreach ($pids as $pid) {
            [$worker, $supervisor] = stream_socket_pair(STREAM_PF_UNIX, STREAM_SOCK_STREAM, STREAM_IPPROTO_IP) ?: self::fail('socket pair');
            stream_set_blocking($worker, false);
            $this->workers[$pid] = $worker;
            $relay->attach($pid, $supervisor);
        }
        return $relay;
    }

    /** @return list<string> the bodies waiting on worker $pid's end */
    private function receive(int $pid): array
    {
        $frames = new RelayFrames();
        $bodies = [];
        while (($data = fread($this->workers[$pid], 1 << 20)) !== false && $data !== '') {
            array_push($bodies, ...$frames->feed($data));
        }
        return $bodies;
    }
}
