<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Isolation\FastCgi\Internal;

use Kiln\Isolation\FastCgi\Internal\Connection;
use Kiln\Isolation\FastCgi\Internal\Deadline;
use Kiln\Isolation\FastCgi\Internal\Timeouts;
use Kiln\Isolation\FastCgi\RecordEncoder;
use Kiln\Isolation\FastCgi\RecordType;

use function Kiln\Loop\async;
use function Kiln\Loop\delay;

use Kiln\Loop\Driver;
use Kiln\Loop\Driver\EpollDriver;
use Kiln\Loop\Driver\SelectDriver;
use Kiln\Loop\Loop;
use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;

/** Reading a responder's connection: a read that emptied the socket is followed by a wait, not by a read that finds nothing. */
final class ConnectionTest extends TestCase
{
    /** @return iterable<string, array{\Closure(): Driver}> */
    public static function drivers(): iterable
    {
        yield 'select' => [static fn(): Driver => new SelectDriver()];
        yield 'epoll' => [static fn(): Driver => new EpollDriver()];
    }

    protected function tearDown(): void
    {
        Loop::set(new SelectDriver());
    }

    /** @param \Closure(): Driver $driver */
    #[DataProvider('drivers')]
    public function testAfterAShortReadTheNextFillWaitsForTheResponderInsteadOfReadingNothing(\Closure $driver): void
    {
        Loop::set($driver());
        [$connection, $peer, $timeouts] = self::connection();
        $stdout = RecordEncoder::stream(RecordType::Stdout, 1, 'first');

        fwrite($peer, $stdout);
        $reads = async(static function () use ($connection): int {
            $connection->fill(new Deadline('t', 10.0, null), null);
            $first = $connection->reads;
            $connection->fill(new Deadline('t', 10.0, null), null); // the peer writes 20 ms later
            return $connection->reads - $first;
        });
        Loop::delay(0.02, static function () use ($peer): void {
            fwrite($peer, RecordEncoder::endRequest(1));
        });

        self::assertSame(1, $reads->await(), 'one read for the second piece: no read before the wait');
        self::assertSame(2, $connection->reads);
        self::assertSame(\strlen($stdout) + 16, $connection->received);
        self::close($connection, $peer, $timeouts);
    }

    /** @param \Closure(): Driver $driver */
    #[DataProvider('drivers')]
    public function testBytesThatArriveBetweenAShortReadAndTheNextFillAreReadWithoutWaitingForMore(\Closure $driver): void
    {
        Loop::set($driver());
        [$connection, $peer, $timeouts] = self::connection();
        fwrite($peer, 'abc');
        $received = async(static function () use ($connection, $peer): int {
            $connection->fill(new Deadline('t', 10.0, null), null);
            fwrite($peer, 'defgh'); // arrives before the next fill, after the read that emptied the socket
            $connection->fill(new Deadline('t', 10.0, null), null);
            return $connection->received;
        });

        self::assertSame(8, $received->await());
        self::assertSame(2, $connection->reads);
        self::close($connection, $peer, $timeouts);
    }

    /** @param \Closure(): Driver $driver */
    #[DataProvider('drivers')]
    public function testAResponseLongerThanOneReadArrivesWhole(\Closure $driver): void
    {
        Loop::set($driver());
        [$connection, $peer, $timeouts] = self::connection();
        $body = str_repeat('0123456789abcdef', 20_000); // 320,000 bytes: more than one read and than the socket buffer
        $wire = RecordEncoder::stream(RecordType::Stdout, 1, $body) . RecordEncoder::endRequest(1);
        $writer = async(static function () use ($peer, $wire): void {
            stream_set_blocking($peer, false);
            while ($wire !== '') {
                $n = fwrite($peer, $wire);
                $wire = substr($wire, (int) $n);
                if ($wire !== '') {
                    delay(0.001);
                }
            }
        });
        $read = async(static function () use ($connection): string {
            $out = '';
            while (true) {
                while (($content = $connection->decoder->nextContent($type, $id)) !== null) {
                    if ($type === RecordType::EndRequest->value) {
                        return $out;
                    }
                    $out .= $content;
                }
                $connection->fill(new Deadline('t', 10.0, null), null);
            }
        });

        self::assertSame($body, $read->await());
        $writer->await();
        self::close($connection, $peer, $timeouts);
    }

    /** @param \Closure(): Driver $driver */
    #[DataProvider('drivers')]
    public function testWhatHasArrivedIsTakenInReadsOfSixtyFourKibibytesNotInPiecesOfPhpsBuffer(\Closure $driver): void
    {
        Loop::set($driver());
        [$connection, $peer, $timeouts] = self::connection();
        self::assertSame(100_000, fwrite($peer, str_repeat('x', 100_000)));
        $reads = async(static function () use ($connection): int {
            while ($connection->received < 100_000) {
                $connection->fill(new Deadline('t', 10.0, null), null);
            }
            return $connection->reads;
        });

        self::assertSame(2, $reads->await(), '65,536 bytes, then the 34,464 left');
        self::close($connection, $peer, $timeouts);
    }

    /**
     * The watcher stays on from one wait to the next, and holds no reference on the loop: a connection whose
     * request is over does not keep Loop::run() from returning.
     *
     * @param \Closure(): Driver $driver
     */
    #[DataProvider('drivers')]
    public function testTheWatcherLeftOnBetweenWaitsDoesNotHoldTheLoop(\Closure $driver): void
    {
        Loop::set($driver());
        [$connection, $peer, $timeouts] = self::connection();
        fwrite($peer, 'abc');
        self::assertSame(3, self::fillOnce($connection));
        $heldOpen = false;
        Loop::unreference(Loop::delay(2.0, static function () use (&$heldOpen): void {
            $heldOpen = true;
            Loop::stop();
        }));

        Loop::run();

        self::assertFalse($heldOpen, 'the loop ran until the guard stopped it: something held it open');
        self::close($connection, $peer, $timeouts);
    }

    /**
     * Bytes that arrive while no Fiber waits on the connection (its response waits for a slow client) wake
     * the loop once: the watcher goes off, since a level-triggered one would report them on every turn and
     * the worker would spin. The next wait turns it on again and gets them.
     *
     * @param \Closure(): Driver $driver
     */
    #[DataProvider('drivers')]
    public function testBytesArrivingWhileNoFiberWaitsDoNotKeepTheWorkerBusyAndReachTheNextWait(\Closure $driver): void
    {
        Loop::set($driver());
        [$connection, $peer, $timeouts] = self::connection();
        fwrite($peer, 'abc');
        self::assertSame(3, self::fillOnce($connection));
        fwrite($peer, 'defgh'); // nobody waits now
        $busy = self::cpuWhileWaiting(0.2);

        self::assertLessThan(0.1, $busy, "the process used {$busy} s of CPU in 0.2 s of waiting: the loop spun on the unread bytes");
        self::assertSame(8, self::fillOnce($connection));
        self::close($connection, $peer, $timeouts);
    }

    /**
     * A connection dropped without close() (the driver still holds its stream open): what arrives on it wakes
     * the loop once, and its watcher goes.
     *
     * @param \Closure(): Driver $driver
     */
    #[DataProvider('drivers')]
    public function testAConnectionDroppedWithoutClosingLeavesNoWatcherThatSpins(\Closure $driver): void
    {
        Loop::set($driver());
        [$connection, $peer, $timeouts] = self::connection();
        fwrite($peer, 'abc');
        self::assertSame(3, self::fillOnce($connection));
        unset($connection);
        gc_collect_cycles();
        fwrite($peer, 'defgh');
        $busy = self::cpuWhileWaiting(0.2);

        self::assertLessThan(0.1, $busy, "the process used {$busy} s of CPU in 0.2 s of waiting: the loop spun on the unread bytes");
        $timeouts->close();
        fclose($peer);
    }

    /** One fill() in a Fiber; the bytes received on the connection so far. */
    private static function fillOnce(Connection $connection): int
    {
        return async(static function () use ($connection): int {
            $connection->fill(new Deadline('t', 10.0, null), null);
            return $connection->received;
        })->await();
    }

    /** The CPU seconds this process used while the loop ran for $seconds. */
    private static function cpuWhileWaiting(float $seconds): float
    {
        $cpu = static function (): float {
            $usage = getrusage();
            return $usage['ru_utime.tv_sec'] + $usage['ru_stime.tv_sec'] + ($usage['ru_utime.tv_usec'] + $usage['ru_stime.tv_usec']) / 1e6;
        };
        $before = $cpu();
        delay($seconds);
        return $cpu() - $before;
    }

    /** @return array{Connection, resource, Timeouts} */
    private static function connection(): array
    {
        $pair = stream_socket_pair(STREAM_PF_UNIX, STREAM_SOCK_STREAM, STREAM_IPPROTO_IP);
        self::assertNotFalse($pair);
        stream_set_blocking($pair[0], false);
        $timeouts = new Timeouts();

        return [new Connection($pair[0], 't', $timeouts), $pair[1], $timeouts];
    }

    /** @param resource $peer */
    private static function close(Connection $connection, mixed $peer, Timeouts $timeouts): void
    {
        $connection->close();
        $timeouts->close();
        fclose($peer);
    }
}
