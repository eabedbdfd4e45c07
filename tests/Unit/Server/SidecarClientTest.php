<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Server;

use Kiln\Server\Message;
use Kiln\Server\SidecarClient;
use Kiln\Server\SidecarListener;
use Kiln\Server\SidecarSpec;
use PHPUnit\Framework\TestCase;

/**
 * The workers' ends of the sidecar conversation when the supervisor is gone (killed): each ends what it knows
 * on its way out, but a shared member (the one php-cgi parent of the server) only when no other worker still
 * holds it, since those may be answering requests through it.
 */
final class SidecarClientTest extends TestCase
{
    private string $dir = '';

    /** @var resource|null */
    private $process = null;

    protected function setUp(): void
    {
        $this->dir = sys_get_temp_dir() . '/kiln-sidecar-client-test-' . getmypid();
        @mkdir($this->dir);
    }

    protected function tearDown(): void
    {
        if (\is_resource($this->process)) {
            proc_terminate($this->process, SIGKILL);
            proc_close($this->process);
        }
        foreach (glob($this->dir . '/*') ?: [] as $file) {
            @unlink($file);
        }
        @rmdir($this->dir);
    }

    public function testASharedMemberIsEndedByTheLastWorkerToLeaveNotTheFirst(): void
    {
        $pid = $this->startProcess();
        [$first, $second] = [$this->client(shared: true, pid: $pid), $this->client(shared: true, pid: $pid)];
        $first->terminateAll();
        usleep(100_000);
        self::assertTrue($this->running(), 'another worker still holds the shared member: it goes on');
        $second->terminateAll();
        self::assertTrue($this->endsWithin(5.0), 'the last worker to leave ends it');
    }

    public function testAMemberOfThisWorkerAloneIsEndedAtOnce(): void
    {
        $pid = $this->startProcess();
        $this->client(shared: false, pid: $pid); // another worker with its own set of the same pid: no say
        $this->client(shared: false, pid: $pid)->terminateAll();
        self::assertTrue($this->endsWithin(5.0));
    }

    private function client(bool $shared, int $pid): SidecarClient
    {
        $client = new SidecarClient(static function (Message $message): void {});
        $client->start();
        $listener = new class implements SidecarListener {
            public function sidecarUp(int $index, int $pid, string $socket): void {}

            public function sidecarDown(int $index, float $retryIn, string $reason): void {}
        };
        $client->open(new SidecarSpec('php-cgi-test', ['/bin/true', SidecarSpec::SOCKET], [], 1, shared: $shared), $listener);
        $client->receive(new Message(Message::SIDECAR_UP, "php-cgi-test 0 $pid {$this->dir}/1-0-1.sock"));
        return $client;
    }

    private function startProcess(): int
    {
        $this->process = proc_open(['sleep', '30'], [], $pipes);
        self::assertIsResource($this->process);
        return proc_get_status($this->process)['pid'];
    }

    private function running(): bool
    {
        return \is_resource($this->process) && proc_get_status($this->process)['running'];
    }

    private function endsWithin(float $seconds): bool
    {
        $until = microtime(true) + $seconds;
        while (microtime(true) < $until) {
            if (!$this->running()) {
                return true;
            }
            usleep(10_000);
        }
        return false;
    }
}
