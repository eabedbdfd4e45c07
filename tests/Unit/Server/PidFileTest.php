<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Server;

use Kiln\Server\PidFile;
use Kiln\Server\ServerException;
use PHPUnit\Framework\TestCase;

final class PidFileTest extends TestCase
{
    private string $path;

    /** @var list<resource> */
    private array $children = [];

    protected function setUp(): void
    {
        $this->path = sys_get_temp_dir() . '/kiln-pidfile-test-' . getmypid() . '-' . bin2hex(random_bytes(4)) . '.pid';
    }

    protected function tearDown(): void
    {
        foreach ($this->children as $child) {
            posix_kill((int) proc_get_status($child)['pid'], SIGKILL);
            proc_close($child);
        }
        @unlink($this->path);
    }

    public function testAProcessCarryingTheSupervisorsTitleHoldsThePidFile(): void
    {
        $pid = $this->child('cli_set_process_title(' . var_export(PidFile::SUPERVISOR_TITLE, true) . '); echo "up\n"; sleep(30);');
        file_put_contents($this->path, "$pid\n");
        self::assertTrue(PidFile::isSupervisor($pid));
        self::assertSame($pid, PidFile::livePid($this->path));
        $this->expectException(ServerException::class);
        $this->expectExceptionMessage("is held by running process $pid");
        (new PidFile($this->path))->check();
    }

    public function testALiveProcessWithoutTheTitleLeavesTheFileStaleAndWriteReplacesIt(): void
    {
        $pid = $this->child('echo "up\n"; sleep(30);');
        file_put_contents($this->path, "$pid\n");
        self::assertTrue(PidFile::alive($pid));
        self::assertFalse(PidFile::isSupervisor($pid));
        self::assertNull(PidFile::livePid($this->path));
        self::assertSame($pid, PidFile::recordedPid($this->path));
        self::assertSame("process $pid is not a Kiln supervisor", PidFile::whyStale($pid));
        $file = new PidFile($this->path);
        self::assertSame($pid, $file->check());
        $file->write();
        self::assertSame(getmypid(), PidFile::recordedPid($this->path));
        $file->remove();
        self::assertFileDoesNotExist($this->path, 'the writer removes its file even without the title');
    }

    public function testNoFileOrNoPidInItIsNothingToReplace(): void
    {
        $file = new PidFile($this->path);
        self::assertNull($file->check());
        file_put_contents($this->path, "not a pid\n");
        self::assertNull(PidFile::recordedPid($this->path));
        self::assertNull($file->check());
    }

    public function testOnceCheckedTheFileIsTakenAndASecondServerIsRefusedBeforeAnyPidIsWritten(): void
    {
        $first = new PidFile($this->path);
        self::assertNull($first->check());
        self::assertFileExists($this->path);
        try {
            (new PidFile($this->path))->check();
            self::fail('a second server took a pid file already taken');
        } catch (ServerException $e) {
            self::assertSame("Pid file {$this->path} is held by another `kiln serve` that is starting: choose another --pid-file to run a second server", $e->getMessage());
        }
        $first->remove();
        self::assertFileDoesNotExist($this->path, 'a file taken and left empty (a start that failed) is removed');
        $second = new PidFile($this->path);
        self::assertNull($second->check(), 'free again once the first lets go');
        $second->remove();
    }

    public function testAFileStillLockedByWhatAGoneSupervisorLeftIsNotReplaced(): void
    {
        // A process holding the lock on a file that names a pid no process has: a supervisor killed with
        // `kill -9` whose workers still finish their requests (they inherited the lock).
        $gone = $this->child('echo "up\n";');
        $deadline = microtime(true) + 5.0;
        while (PidFile::alive($gone) && microtime(true) < $deadline) {
            usleep(10_000);
        }
        $path = var_export($this->path, true);
        $this->child("\$f = fopen($path, 'c'); flock(\$f, LOCK_EX); ftruncate(\$f, 0); fwrite(\$f, '$gone' . PHP_EOL); echo \"up\\n\"; sleep(30);");
        $this->expectException(ServerException::class);
        $this->expectExceptionMessage("Pid file {$this->path} is held by another server: one that is starting, or what is left of supervisor $gone, which is gone");
        (new PidFile($this->path))->check();
    }

    public function testAFileRemovedByAStoppingServerBetweenTheOpenAndTheLockIsOpenedAgainAndTaken(): void
    {
        // What a supervisor stopping at that moment does: it still holds the lock, then removes the file.
        $holder = $this->heldElsewhere();
        $file = new PidFile($this->path, static function () use ($holder, &$calls): void {
            if (($calls = ($calls ?? 0) + 1) === 1) {
                unlink($holder);
            }
        });
        self::assertNull($file->check(), 'the path was free: a new file is made and taken');
        self::assertSame(2, $calls, 'opened twice: the removed file, then the new one');
        $this->assertTakenBy($file);
    }

    public function testAFileReplacedBetweenTheOpenAndTheLockIsOpenedAgainAndTheOneAtThePathTaken(): void
    {
        $holder = $this->heldElsewhere();
        $file = new PidFile($this->path, function () use ($holder, &$calls): void {
            if (($calls = ($calls ?? 0) + 1) === 1) {
                file_put_contents("$holder.new", '');
                rename("$holder.new", $holder);
            }
        });
        self::assertNull($file->check());
        self::assertSame(2, $calls);
        $this->assertTakenBy($file);
    }

    public function testAChildThatForgetsThePidFileLetsGoOfItsCopyOfTheLockAndNotOfTheParents(): void
    {
        $first = new PidFile($this->path);
        self::assertNull($first->check());
        $pair = stream_socket_pair(STREAM_PF_UNIX, STREAM_SOCK_STREAM, STREAM_IPPROTO_IP);
        self::assertNotFalse($pair);
        $pid = pcntl_fork();
        self::assertNotSame(-1, $pid);
        if ($pid === 0) {
            $first->forgetInChild();
            fwrite($pair[1], "forgot\n");
            sleep(30); // ended by the parent: a child of the test runner must not run its shutdown
            posix_kill(posix_getpid(), SIGKILL);
        }
        try {
            $read = [$pair[0]];
            $none = null;
            self::assertSame(1, stream_select($read, $none, $none, 10), 'the child forgot the file within 10 s');
            self::assertSame("forgot\n", fgets($pair[0]));
            self::assertFileExists($this->path, 'forgetting removes nothing');
            try {
                (new PidFile($this->path))->check();
                self::fail('the lock went with the child\'s copy');
            } catch (ServerException $e) {
                self::assertStringContainsString('is held by another `kiln serve`', $e->getMessage());
            }
            // The parent killed (kill -9): its descriptor closed, the file left where it is.
            $first->forgetInChild();
            self::assertFileExists($this->path);
            $next = new PidFile($this->path);
            self::assertNull($next->check(), 'free once the parent is gone, though the child still runs');
            $next->remove();
        } finally {
            posix_kill($pid, SIGKILL);
            pcntl_waitpid($pid, $status);
        }
    }

    /** A child that locks the file at the path and holds it; returns the path. */
    private function heldElsewhere(): string
    {
        $path = var_export($this->path, true);
        $this->child("\$f = fopen($path, 'c'); flock(\$f, LOCK_EX); echo \"up\\n\"; sleep(30);");
        return $this->path;
    }

    private function assertTakenBy(PidFile $file): void
    {
        $file->write();
        self::assertSame(getmypid(), PidFile::recordedPid($this->path));
        try {
            (new PidFile($this->path))->check();
            self::fail('the file at the path is not locked');
        } catch (ServerException $e) {
            self::assertStringContainsString("Pid file {$this->path} is held by ", $e->getMessage());
        }
        $file->remove();
    }

    /** Starts `php -r $code` and waits for its first line; returns its pid. */
    private function child(string $code): int
    {
        $child = proc_open([PHP_BINARY, '-r', $code], [0 => ['file', '/dev/null', 'r'], 1 => ['pipe', 'w'], 2 => ['file', '/dev/null', 'w']], $pipes);
        self::assertNotFalse($child);
        $this->children[] = $child;
        $read = [$pipes[1]];
        $none = null;
        self::assertSame(1, stream_select($read, $none, $none, 10), 'the child started within 10 s');
        self::assertSame("up\n", fgets($pipes[1]));
        return (int) proc_get_status($child)['pid'];
    }
}
