<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Store;

use Kiln\Loop\Driver\SelectDriver;
use Kiln\Loop\Loop;
use Kiln\Server\RelayLink;
use Kiln\Store\InProcessBus;
use Kiln\Store\NodeBus;
use Kiln\Store\RelayBus;
use PHPUnit\Framework\TestCase;

final class NodeBusTest extends TestCase
{
    protected function tearDown(): void
    {
        NodeBus::set(null);
    }

    public function testOutsideAWorkerItIsThisProcesssOwnBusAlwaysTheSameOne(): void
    {
        NodeBus::set(null);
        self::assertInstanceOf(InProcessBus::class, NodeBus::get());
        self::assertSame(NodeBus::get(), NodeBus::get());
        self::assertFalse(NodeBus::spansNode());
    }

    public function testABusSetReplacesItForEverythingThatAsksLater(): void
    {
        $bus = new InProcessBus();
        NodeBus::set($bus);
        self::assertSame($bus, NodeBus::get());
    }

    public function testInAWorkerItIsTheRelayBusAndAProcessForkedFromTheWorkerGetsItsOwn(): void
    {
        // Run in a child: making a link current is per-process state this test process must not keep.
        self::assertSame('relay, own after fork', $this->inChild(static function (): string {
            Loop::set(new SelectDriver());
            [$worker] = stream_socket_pair(STREAM_PF_UNIX, STREAM_SOCK_STREAM, STREAM_IPPROTO_IP) ?: throw new \RuntimeException('socket pair');
            $link = new RelayLink($worker);
            $link->makeCurrent();
            NodeBus::set(null);
            $bus = NodeBus::get();
            $answer = $bus instanceof RelayBus && NodeBus::spansNode() ? 'relay' : $bus::class;
            $pid = pcntl_fork();
            if ($pid === 0) {
                $own = RelayLink::current() === null && NodeBus::get() instanceof InProcessBus;
                pcntl_exec(PHP_BINARY, ['-n', '-r', 'exit(' . ($own ? 0 : 1) . ');']);
            }
            pcntl_waitpid($pid, $status);
            return $answer . (\is_int($status) && pcntl_wexitstatus($status) === 0 ? ', own after fork' : ', shared after fork');
        }));
    }

    /** @param \Closure(): string $body */
    private function inChild(\Closure $body): string
    {
        $file = (string) tempnam(sys_get_temp_dir(), 'kiln-nodebus-test-');
        $pid = pcntl_fork();
        if ($pid === 0) {
            try {
                file_put_contents($file, $body());
            } catch (\Throwable $e) {
                file_put_contents($file, (string) $e);
            }
            pcntl_exec(PHP_BINARY, ['-n', '-r', 'exit(0);']);
        }
        pcntl_waitpid($pid, $status);
        $result = (string) file_get_contents($file);
        unlink($file);
        return $result;
    }
}
