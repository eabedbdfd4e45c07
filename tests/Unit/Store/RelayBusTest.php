<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Store;

use Kiln\Loop\Driver\SelectDriver;
use Kiln\Loop\Loop;
use Kiln\Server\BusRelay;
use Kiln\Server\Log;
use Kiln\Server\LogFile;
use Kiln\Server\Message;
use Kiln\Server\RelayLink;
use Kiln\Server\WorkerPool;
use Kiln\Store\BusException;
use Kiln\Store\RelayBus;
use PHPUnit\Framework\TestCase;

/**
 * The node bus with real processes: this test is the supervisor (a WorkerPool with a BusRelay, as
 * Supervisor runs it) and forks the workers, each with a RelayBus on its RelayLink.
 */
final class RelayBusTest extends TestCase
{
    private string $dir;

    protected function setUp(): void
    {
        Loop::set(new SelectDriver());
        $this->dir = sys_get_temp_dir() . '/kiln-relaybus-test-' . getmypid() . '-' . bin2hex(random_bytes(3));
        mkdir($this->dir);
    }

    protected function tearDown(): void
    {
        array_map('unlink', glob($this->dir . '/*') ?: []);
        @rmdir($this->dir);
    }

    public function testEveryWorkerHearsEveryMessageOnceInEachPublishersOrder(): void
    {
        $results = $this->runWorkers(3, static function (int $slot, RelayBus $bus, \Closure $done): void {
            for ($i = 0; $i < 500; $i++) {
                $bus->publish('n', "$slot:$i");
            }
            $done(static fn(array $heard): bool => \count($heard) >= 1500);
        });
        self::assertSame([1, 2, 3], array_keys($results), 'every worker reported what it heard');
        foreach ($results as $slot => $heard) {
            self::assertCount(1500, $heard, "worker $slot");
            foreach ([1, 2, 3] as $publisher) {
                $from = array_values(array_filter($heard, static fn(string $m): bool => str_starts_with($m, "$publisher:")));
                self::assertSame(array_map(static fn(int $i): string => "$publisher:$i", range(0, 499)), $from, "worker $slot, from $publisher");
            }
        }
    }

    public function testAWorkerThatDiesDoesNotStopTheOthersAndNothingIsHeardTwice(): void
    {
        $results = $this->runWorkers(3, static function (int $slot, RelayBus $bus, \Closure $done): void {
            if ($slot === 3) {
                for ($i = 0; $i < 50; $i++) {
                    $bus->publish('n', "3:$i");
                }
                Loop::delay(0.05, static function (): void {
                    posix_kill((int) getmypid(), SIGKILL);
                });
                return;
            }
            for ($i = 0; $i < 300; $i++) { // over 150 ms, while worker 3 dies
                Loop::delay(0.0005 * $i, static fn() => $bus->publish('n', "$slot:$i"));
            }
            $done(static fn(array $heard): bool => \count(array_filter($heard, static fn(string $m): bool => !str_starts_with($m, '3:'))) >= 600);
        });
        self::assertArrayNotHasKey(3, $results, 'worker 3 was killed before it reported');
        foreach ([1, 2] as $slot) {
            $heard = $results[$slot];
            foreach ([1, 2] as $publisher) {
                $from = array_values(array_filter($heard, static fn(string $m): bool => str_starts_with($m, "$publisher:")));
                self::assertSame(array_map(static fn(int $i): string => "$publisher:$i", range(0, 299)), $from, "worker $slot, from $publisher");
            }
            $fromDead = array_values(array_filter($heard, static fn(string $m): bool => str_starts_with($m, '3:')));
            self::assertSame(\array_slice(array_map(static fn(int $i): string => "3:$i", range(0, 49)), 0, \count($fromDead)), $fromDead, "worker $slot: what the dead one sent, in order, once");
        }
    }

    public function testMebibytePayloadsArriveWhole(): void
    {
        $results = $this->runWorkers(2, static function (int $slot, RelayBus $bus, \Closure $done): void {
            for ($i = 0; $i < 3; $i++) {
                $bus->publish('n', str_repeat(\chr(64 + $slot * 4 + $i), 1 << 20));
            }
            $done(static fn(array $heard): bool => \count($heard) >= 6);
        }, static fn(string $payload): string => \strlen($payload) . ':' . $payload[0] . ':' . md5($payload));
        self::assertSame([1, 2], array_keys($results), 'every worker reported what it heard');
        foreach ($results as $slot => $heard) {
            $expected = [];
            foreach ([1, 2] as $publisher) {
                for ($i = 0; $i < 3; $i++) {
                    $payload = str_repeat(\chr(64 + $publisher * 4 + $i), 1 << 20);
                    $expected[] = \strlen($payload) . ':' . $payload[0] . ':' . md5($payload);
                }
            }
            self::assertEqualsCanonicalizing($expected, $heard, "worker $slot");
        }
    }

    public function testAWorkerThatDoesNotReadLosesMessagesAtTheRelayAndTheLossIsLogged(): void
    {
        $log = $this->dir . '/relay.log';
        $results = $this->runWorkers(2, static function (int $slot, RelayBus $bus, \Closure $done): void {
            if ($slot === 2) {
                sleep(30); // blocks its loop: reads nothing until it is killed
                return;
            }
            for ($i = 0; $i < 200; $i++) {
                $bus->publish('n', str_repeat('x', 10_000));
            }
            $done(static fn(array $heard): bool => \count($heard) >= 200);
        }, relayQueue: 65536, logFile: $log, stopWhen: static fn(array $reported): bool => isset($reported[1]));
        self::assertCount(200, $results[1], 'the publisher heard its own messages');
        self::assertMatchesRegularExpression('~node bus: \d+ message\(s\) lost for worker pid \d+: it does not read them~', (string) file_get_contents($log));
    }

    public function testAFullQueueToTheSupervisorThrowsAndTheMessageGoesNowhere(): void
    {
        [$worker, $supervisor] = stream_socket_pair(STREAM_PF_UNIX, STREAM_SOCK_STREAM, STREAM_IPPROTO_IP) ?: self::fail('socket pair');
        $link = new RelayLink($worker, queueLimit: 1 << 20, maxBody: 200_000);
        $link->start();
        $bus = new RelayBus($link);
        $heard = [];
        $bus->subscribe('n', static function (string $channel, string $payload) use (&$heard): void {
            $heard[] = \strlen($payload);
        });
        $published = 0;
        try {
            while ($published < 1000) {
                $bus->publish('n', str_repeat('p', 100_000));
                $published++;
            }
        } catch (BusException $e) {
            self::assertStringContainsString("A message to 'n' was not published: The node bus queue is full", $e->getMessage());
        }
        self::assertSame(10, $published, '1 MiB holds ten messages of 100,000 bytes and their headers');
        Loop::run();
        self::assertSame(array_fill(0, 10, 100_000), $heard, 'this process hears what was published, not what failed');
        fclose($supervisor);
    }

    public function testAMessageOverTheFrameBoundIsRefusedAndTheBusCarriesOn(): void
    {
        [$worker, $supervisor] = stream_socket_pair(STREAM_PF_UNIX, STREAM_SOCK_STREAM, STREAM_IPPROTO_IP) ?: self::fail('socket pair');
        $link = new RelayLink($worker, queueLimit: 4096, maxBody: 1000);
        $link->start();
        $bus = new RelayBus($link);
        try {
            $bus->publish('n', str_repeat('p', 1000));
            self::fail('published a body of 1,003 bytes');
        } catch (BusException $e) {
            self::assertStringContainsString('1003 bytes is over the bound of 1000', $e->getMessage());
        }
        $bus->publish('n', str_repeat('p', 997));
        Loop::run();
        self::assertTrue($link->isOpen());
        self::assertSame(pack('N', 1000) . "\x00\x01n" . str_repeat('p', 997), fread($supervisor, 2000));
    }

    public function testAPayloadOfSixteenMebibytesIsPublishedOnTheDefaultLink(): void
    {
        [$worker, $supervisor] = stream_socket_pair(STREAM_PF_UNIX, STREAM_SOCK_STREAM, STREAM_IPPROTO_IP) ?: self::fail('socket pair');
        $link = new RelayLink($worker);
        $link->start();
        $bus = new RelayBus($link);
        $bus->publish('abc', str_repeat('p', 16 << 20));
        self::assertSame(4 + 2 + 3 + (16 << 20), $link->queued(), 'the whole frame waits for the supervisor');
        try {
            $bus->publish('abc', str_repeat('p', (16 << 20) + 1));
            self::fail('published a payload over 16 MiB');
        } catch (BusException $e) {
            self::assertStringContainsString('16777217 bytes is over the bound of 16777216', $e->getMessage());
        }
        $link->close(); // nothing is read here: no flush at exit
        fclose($supervisor);
    }

    public function testPublishingAfterTheSupervisorIsGoneThrows(): void
    {
        [$worker, $supervisor] = stream_socket_pair(STREAM_PF_UNIX, STREAM_SOCK_STREAM, STREAM_IPPROTO_IP) ?: self::fail('socket pair');
        $link = new RelayLink($worker);
        $link->start();
        $bus = new RelayBus($link);
        fclose($supervisor);
        Loop::delay(0.05, static fn() => null);
        Loop::run();
        self::assertFalse($link->isOpen());
        $this->expectException(BusException::class);
        $this->expectExceptionMessage('the supervisor is gone');
        $bus->publish('n', 'x');
    }

    public function testAClosedBusRefusesToPublish(): void
    {
        [$worker] = stream_socket_pair(STREAM_PF_UNIX, STREAM_SOCK_STREAM, STREAM_IPPROTO_IP) ?: self::fail('socket pair');
        $bus = new RelayBus(new RelayLink($worker));
        $bus->close();
        $this->expectException(BusException::class);
        $bus->publish('n', 'x');
    }

    /**
     * Forks $count workers on a relay; each subscribes to 'n', waits for all to be attached, runs $body,
     * and reports what it heard once $body's condition holds (or after 20 s).
     *
     * @param \Closure(int, RelayBus, \Closure(\Closure(list<string>): bool): void): void $body
     * @param ?\Closure(string): string $record what to keep of a payload
     * @param ?\Closure(array<int, list<string>>): bool $stopWhen ends the run before every worker exits (the rest are killed)
     * @return array<int, list<string>> slot => what it heard, for the workers that reported
     */
    private function runWorkers(int $count, \Closure $body, ?\Closure $record = null, int $relayQueue = BusRelay::QUEUE_LIMIT, ?string $logFile = null, ?\Closure $stopWhen = null): array
    {
        $dir = $this->dir;
        $relay = new BusRelay(new Log(new LogFile($logFile ?? '/dev/null')), $relayQueue);
        $pool = new WorkerPool(static function (int $slot, mixed $channel, mixed $stream) use ($dir, $body, $record): int {
            $code = 0;
            try {
                Loop::set(new SelectDriver());
                \assert(\is_resource($stream));
                $link = new RelayLink($stream);
                $link->start();
                $bus = new RelayBus($link);
                $heard = [];
                $bus->subscribe('n', static function (string $channel, string $payload) use (&$heard, $record): void {
                    $heard[] = $record !== null ? $record($payload) : $payload;
                });
                stream_set_blocking($channel, true);
                fgets($channel); // "go": every worker is attached
                $until = null;
                $body($slot, $bus, static function (\Closure $condition) use (&$until): void {
                    $until = $condition;
                });
                $deadline = microtime(true) + 20;
                Loop::repeat(0.005, static function () use (&$until, &$heard, $link, $deadline): void {
                    if (($until !== null && $until($heard) && $link->queued() === 0) || microtime(true) > $deadline) {
                        Loop::stop();
                    }
                });
                Loop::run();
                file_put_contents("$dir/$slot.json", json_encode($heard));
            } catch (\Throwable $e) {
                file_put_contents("$dir/$slot.error", (string) $e);
                $code = 1;
            }
            // Leave without PHPUnit's shutdown handlers (they belong to the parent).
            pcntl_exec(PHP_BINARY, ['-n', '-r', "exit($code);"]);
            return $code;
        }, $relay);
        $pids = [];
        for ($slot = 1; $slot <= $count; $slot++) {
            $pids[] = $pool->spawn($slot, 1)->pid;
        }
        foreach ($pids as $pid) {
            $pool->send($pid, new Message(Message::READY));
        }
        $deadline = microtime(true) + 30;
        $reported = [];
        while (!$pool->isEmpty() && microtime(true) < $deadline) {
            $pool->read(0.02);
            $pool->flushOutboxes();
            $pool->reap();
            $reported = $this->reported($count);
            if ($stopWhen !== null && $stopWhen($reported)) {
                break;
            }
        }
        foreach ($pool->all() as $handle) {
            posix_kill($handle->pid, SIGKILL);
        }
        $until = microtime(true) + 5;
        while (!$pool->isEmpty() && microtime(true) < $until) {
            $pool->reap();
            usleep(10_000);
        }
        foreach (glob($this->dir . '/*.error') ?: [] as $error) {
            self::fail(basename($error) . ': ' . file_get_contents($error));
        }
        return $this->reported($count);
    }

    /** @return array<int, list<string>> */
    private function reported(int $count): array
    {
        $reported = [];
        for ($slot = 1; $slot <= $count; $slot++) {
            $json = @file_get_contents("$this->dir/$slot.json");
            if (\is_string($json) && ($list = json_decode($json, true)) !== null) {
                /** @var list<string> $list */
                $reported[$slot] = $list;
            }
        }
        return $reported;
    }
}
