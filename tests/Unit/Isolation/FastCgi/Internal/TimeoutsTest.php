<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Isolation\FastCgi\Internal;

use Kiln\Isolation\FastCgi\FastCgiTimeoutException;
use Kiln\Isolation\FastCgi\Internal\Connection;
use Kiln\Isolation\FastCgi\Internal\Deadline;
use Kiln\Isolation\FastCgi\Internal\Timeouts;
use Kiln\Isolation\FastCgi\RecordEncoder;

use function Kiln\Loop\async;

use Kiln\Loop\Driver\SelectDriver;
use Kiln\Loop\Loop;
use PHPUnit\Framework\TestCase;

/** Waits of a client's connections on one shared timer, with a watcher per connection that is only enabled. */
final class TimeoutsTest extends TestCase
{
    protected function setUp(): void
    {
        Loop::set(new SelectDriver());
        Loop::setErrorHandler(null);
    }

    public function testASilentResponderTimesOutOneWaitWhileAnotherIsAnsweredAndNothingKeepsTheLoopAfter(): void
    {
        $timeouts = new Timeouts();
        [$silent, $silentPeer] = self::pair();
        [$answering, $answeringPeer] = self::pair();
        $a = new Connection($silent, 'a', $timeouts);
        $b = new Connection($answering, 'b', $timeouts);
        $timedOut = async(static function () use ($a): string {
            try {
                $a->fill(new Deadline('a', 0.05, null), null);
            } catch (FastCgiTimeoutException $e) {
                return $e->getMessage();
            }
            return 'no timeout';
        });
        $answered = async(static function () use ($b): int {
            $b->fill(new Deadline('b', 60.0, null), null);
            $b->fill(new Deadline('b', 60.0, null), null); // the same watcher, enabled again
            return $b->received;
        });
        $answer = static function () use ($answeringPeer): void {
            fwrite($answeringPeer, RecordEncoder::endRequest(1));
        };
        Loop::delay(0.01, $answer);
        Loop::delay(0.02, $answer);
        $start = hrtime(true);
        self::assertStringContainsString('was silent for 0.05 s', $timedOut->await());
        self::assertSame(32, $answered->await());
        Loop::run(); // returns at once: the 60 s limits are not waited for once their waits ended
        self::assertLessThan(5.0, (hrtime(true) - $start) / 1e9);
        $a->close();
        $b->close();
        $timeouts->close();
        fclose($silentPeer);
        fclose($answeringPeer);
    }

    /** @return array{resource, resource} */
    private static function pair(): array
    {
        $pair = stream_socket_pair(STREAM_PF_UNIX, STREAM_SOCK_STREAM, STREAM_IPPROTO_IP);
        self::assertNotFalse($pair);
        stream_set_blocking($pair[0], false);
        return [$pair[0], $pair[1]];
    }
}
