<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Loop;

use Kiln\Loop\Driver;
use Kiln\Loop\Driver\EpollDriver;

final class EpollDriverTest extends DriverTestCase
{
    protected function createDriver(): Driver
    {
        if (!EpollDriver::isSupported()) {
            self::fail('epoll through FFI is not available (needs Linux and ext-ffi: scripts/install-deps.sh installs php-ffi)');
        }

        return new EpollDriver();
    }

    public function testCapacityFollowsTheOpenFilesLimit(): void
    {
        self::assertGreaterThan(1024, $this->loop->capacity());
    }

    public function testMoreThan1100SocketsWithFdsAbove1024AreWatched(): void
    {
        $limits = \posix_getrlimit();
        self::assertIsArray($limits);
        if ((int) $limits['soft openfiles'] < 2600) {
            self::assertTrue(\posix_setrlimit(\POSIX_RLIMIT_NOFILE, 4096, (int) $limits['hard openfiles']), 'Cannot raise RLIMIT_NOFILE');
        }
        $pairs = [];
        $seen = [];
        for ($i = 0; $i < 1150; $i++) {
            $pairs[$i] = self::pair();
            $this->loop->onReadable($pairs[$i][0], function (string $id, $stream) use (&$seen, $i): void {
                $seen[$i] = \fread($stream, 16);
                $this->loop->cancel($id);
            });
        }
        $highFds = 0;
        foreach ($pairs as $i => [$reader, $writer]) {
            \fwrite($writer, "m$i");
        }
        foreach (\scandir('/proc/self/fd') ?: [] as $fd) {
            $highFds += (int) ((int) $fd >= 1024);
        }
        self::assertGreaterThan(100, $highFds, 'the test must use fds >= 1024');
        $this->runGuarded(5.0);
        self::assertCount(1150, $seen);
        self::assertSame('m1149', $seen[1149]);
        \assert($this->loop instanceof EpollDriver);
        self::assertLessThan(10, $this->loop->fdScans(), 'fds should be found without scanning /proc/self/fd');
    }

    public function testAPipeEndIsNotConfusedWithTheOtherEndOfTheSamePipe(): void
    {
        $pipes = [];
        $proc = \proc_open(['cat'], [0 => ['pipe', 'r'], 1 => ['pipe', 'w']], $pipes);
        self::assertIsResource($proc);
        [$toCat, $fromCat] = [$pipes[0], $pipes[1]];
        $out = '';
        $this->loop->onWritable($toCat, function (string $id, $stream): void {
            \fwrite($stream, 'echo');
            \fclose($stream);
            $this->loop->cancel($id);
        });
        $this->loop->onReadable($fromCat, function (string $id, $stream) use (&$out): void {
            $chunk = \fread($stream, 100);
            $out .= $chunk;
            if ($chunk === '' || \feof($stream)) {
                $this->loop->cancel($id);
            }
        });
        $this->runGuarded();
        \fclose($fromCat);
        \proc_close($proc);
        self::assertSame('echo', $out);
    }

    public function testAWatcherDisabledAndEnabledAgainBeforeTheNextWaitCostsNoSystemCall(): void
    {
        \assert($this->loop instanceof EpollDriver);
        [$a, $b] = self::pair();
        $got = [];
        $before = $this->loop->interestChanges();
        $this->loop->onReadable($a, function (string $id, $stream) use (&$got, $b): void {
            $got[] = \fread($stream, 16);
            // As a Fiber awaiting a socket after each read does: off while it works, on again to wait.
            $this->loop->disable($id);
            $this->loop->enable($id);
            if (\count($got) < 4) {
                \fwrite($b, 'm' . \count($got));
                return;
            }
            $this->loop->disable($id);
            $this->loop->delay(0.01, static fn() => null); // one more wait, which must first remove the stream
        });
        \fwrite($b, 'm0');
        $this->runGuarded();
        self::assertSame(['m0', 'm1', 'm2', 'm3'], $got);
        self::assertSame(2, $this->loop->interestChanges() - $before, 'one ADD as it is watched, one DEL before the last wait');
    }

    public function testAStreamGivenTheFdOfOneGivenUpInTheSameTurnIsWatched(): void
    {
        [$a, $b] = self::pair();
        $got = '';
        $this->loop->onReadable($a, function (string $id) use (&$got, &$a, &$b): void {
            // The old stream leaves with its watcher disabled, not cancelled: its removal reaches the kernel only
            // before the next wait, by which time a new socket has its fd number (the kernel hands out the lowest
            // free one) and is watched too.
            $this->loop->disable($id);
            \fclose($a);
            \fclose($b);
            [$c, $d] = self::pair();
            $this->loop->onReadable($c, function (string $id, $stream) use (&$got, $d): void {
                $got = \fread($stream, 16);
                $this->loop->cancel($id);
                \fclose($d);
            });
            \fwrite($d, 'new');
        });
        \fwrite($b, 'old');
        $this->runGuarded();
        self::assertSame('new', $got, 'removing the old stream must not remove the new one that took its fd');
    }

    public function testACancelledWatchersRemovalIsSentAtOnce(): void
    {
        \assert($this->loop instanceof EpollDriver);
        [$a, $b] = self::pair();
        $this->loop->onReadable($a, function (string $id) use ($a): void {
            \fread($a, 16);
            $this->loop->disable($id); // deferred...
            $before = $this->loop->interestChanges();
            $this->loop->cancel($id); // ...until the watcher is cancelled: its stream may be closed next
            self::assertSame(1, $this->loop->interestChanges() - $before);
        });
        \fwrite($b, 'x');
        $this->runGuarded();
    }

    public function testARegularFileDisabledAndEnabledAgainInOneTurnIsStillAlwaysReady(): void
    {
        $file = \tmpfile();
        self::assertIsResource($file);
        $calls = 0;
        $this->loop->onReadableUnbuffered($file, function (string $id) use (&$calls): void {
            $calls++;
            $this->loop->disable($id);
            $this->loop->enable($id);
            if ($calls === 3) {
                $this->loop->cancel($id);
            }
        });
        $this->runGuarded(1.0);
        self::assertSame(3, $calls, 'epoll refuses regular files: they are reported ready on every turn, as select does');
    }

    public function testAStreamThatCannotBeWatchedIsRefusedWhereItIsWatchedAndTheLoopRunsOn(): void
    {
        $memory = \fopen('php://memory', 'r+');
        self::assertIsResource($memory);
        try {
            $this->loop->onReadable($memory, static fn() => null);
            self::fail('a stream without a file descriptor cannot be watched');
        } catch (\Error $e) {
            self::assertStringContainsString('file descriptor', $e->getMessage());
        }
        $ran = false;
        $this->loop->delay(0.01, static function () use (&$ran): void {
            $ran = true;
        });
        // Nothing of the refused stream is left: no watcher keeps the loop running, none fails at the next wait.
        $this->runGuarded();
        self::assertTrue($ran);
    }

    public function testAReaderDisabledWithDataPendingStaysQuietWhileItsWriterRunsAndFiresWhenEnabledInALaterTurn(): void
    {
        [$a, $b] = self::pair();
        $events = [];
        $reader = $this->loop->onReadable($a, function (string $id, $stream) use (&$events): void {
            $events[] = 'read ' . \fread($stream, 16);
            $this->loop->cancel($id);
        });
        $this->loop->disable($reader);
        \fwrite($b, 'x');
        $this->loop->onWritable($a, function (string $id) use (&$events, $reader): void {
            $events[] = 'write';
            $this->loop->cancel($id);
            $this->loop->delay(0.02, function () use (&$events, $reader): void {
                $events[] = 'enable';
                $this->loop->enable($reader);
            });
        });
        $this->runGuarded();
        self::assertSame(['write', 'enable', 'read x'], $events);
    }
}
