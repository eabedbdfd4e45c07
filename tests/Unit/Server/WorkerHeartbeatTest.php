<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Server;

use Kiln\Server\Config;
use Kiln\Server\Log;
use Kiln\Server\LogFile;
use Kiln\Server\Worker;
use PHPUnit\Framework\TestCase;

/** The worker's heartbeat beside its timer (docs/design/028): a finished request beats when a beat is due. */
final class WorkerHeartbeatTest extends TestCase
{
    /** @var resource */
    private mixed $workerEnd;

    /** @var resource */
    private mixed $supervisorEnd;

    protected function setUp(): void
    {
        $pair = stream_socket_pair(STREAM_PF_UNIX, STREAM_SOCK_STREAM, STREAM_IPPROTO_IP);
        self::assertNotFalse($pair);
        [$this->workerEnd, $this->supervisorEnd] = $pair;
        stream_set_blocking($this->workerEnd, false); // as Worker::run() leaves it
        stream_set_blocking($this->supervisorEnd, false);
    }

    protected function tearDown(): void
    {
        fclose($this->workerEnd);
        fclose($this->supervisorEnd);
    }

    public function testAServedRequestSendsAliveWhenTheLastBeatIsOlderThanTheBeatIntervalAndOnlyThen(): void
    {
        $worker = $this->worker(4.0); // a beat is due every second
        $worker->requestServed();
        self::assertSame("alive\nfirst-request\n", $this->received(), 'the first request beats: none was sent yet');
        $worker->requestServed();
        $worker->requestServed();
        self::assertSame('', $this->received(), 'not due again within the second');
        usleep(1_050_000);
        $worker->requestServed();
        self::assertSame("alive\n", $this->received(), 'due again after the interval');
    }

    public function testAServedRequestSendsNoHeartbeatWithTheStallTimeoutOff(): void
    {
        $worker = $this->worker(0.0);
        $worker->requestServed();
        usleep(300_000);
        $worker->requestServed();
        self::assertSame("first-request\n", $this->received());
    }

    public function testAHeartbeatTheChannelCannotTakeIsDroppedInsteadOfWaitedFor(): void
    {
        $worker = $this->worker(0.5); // a beat is due every 0.125 s
        $worker->requestServed();
        self::assertSame("alive\nfirst-request\n", $this->received());
        $filled = 0;
        while (($written = (int) @fwrite($this->workerEnd, str_repeat('.', 4096))) > 0) {
            $filled += $written; // the supervisor reads nothing: its end fills up
        }
        // A blocking write would wait this long, then give up and mark the stream timed out.
        stream_set_timeout($this->workerEnd, 2);
        usleep(150_000);
        $worker->requestServed();
        $meta = stream_get_meta_data($this->workerEnd);
        self::assertFalse($meta['timed_out'], 'the worker did not wait for the channel');
        self::assertFalse($meta['blocked'], 'the channel stays non-blocking');
        self::assertSame(str_repeat('.', $filled), $this->received(), 'no half heartbeat after what was queued');
    }

    private function worker(float $stallTimeout): Worker
    {
        return new Worker(1, Config::create(stallTimeout: $stallTimeout), new Log(new LogFile('/dev/null')), $this->workerEnd, []);
    }

    /** What the supervisor's end can read now. */
    private function received(): string
    {
        $data = '';
        while (($chunk = fread($this->supervisorEnd, 65536)) !== false && $chunk !== '') {
            $data .= $chunk;
        }
        return $data;
    }
}
