<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Store;

use Kiln\Store\ApcuState;
use Kiln\Store\ApcuStore;
use Kiln\Store\MemoryTable;
use Kiln\Store\NodeState;
use Kiln\Store\TableStore;
use PHPUnit\Framework\TestCase;

final class NodeStateTest extends TestCase
{
    protected function tearDown(): void
    {
        putenv('KILN_NODE_ID');
        NodeState::set(null);
        NodeState::remove(NodeState::nodeId(getmypid()));
    }

    public function testWorkersForkedFromOneParentShareTheNodeState(): void
    {
        $key = 'node-test-' . bin2hex(random_bytes(4));
        $children = [];
        for ($c = 0; $c < 2; $c++) {
            $pid = pcntl_fork();
            self::assertNotSame(-1, $pid);
            if ($pid === 0) {
                $code = 0;
                try {
                    NodeState::set(null); // as a fresh worker: find the store by the parent's pid
                    for ($i = 0; $i < 100; $i++) {
                        NodeState::get()->update($key, static fn(?array $c): array => [($c[0] ?? 0) + 1], 60);
                    }
                } catch (\Throwable) {
                    $code = 1;
                }
                pcntl_exec(PHP_BINARY, ['-n', '-r', "exit($code);"]);
                posix_kill(getmypid(), SIGKILL);
            }
            $children[] = $pid;
        }
        foreach ($children as $pid) {
            pcntl_waitpid($pid, $status);
            self::assertSame(0, pcntl_wexitstatus($status));
        }
        // This process is the children's "supervisor": it finds their table by its own pid.
        $view = ApcuState::available() ? new ApcuState() : MemoryTable::file(NodeState::path(NodeState::nodeId(getmypid())));
        self::assertSame([200], $view->get($key));
    }

    public function testKilnNodeIdNamesTheNodeWhenSetAndIsChecked(): void
    {
        putenv('KILN_NODE_ID=blue-7');
        self::assertSame('blue-7', NodeState::nodeId());
        self::assertStringEndsWith('-node-blue-7.state', NodeState::path());
        putenv('KILN_NODE_ID=../../etc/x');
        $this->expectException(\ValueError::class);
        NodeState::nodeId();
    }

    public function testTheNodeIdCarriesTheSupervisorStartTimeSoAReusedPidIsAnotherNode(): void
    {
        self::assertMatchesRegularExpression('/^' . getmypid() . '-\d+$/', NodeState::nodeId(getmypid()));
        self::assertSame(NodeState::nodeId(posix_getppid()), NodeState::nodeId());
    }

    public function testSweepRemovesTablesOfGoneSupervisorsOnly(): void
    {
        $live = NodeState::path(NodeState::nodeId(getmypid()));
        [$dir, $prefix] = [\dirname($live), basename(substr($live, 0, (int) strpos($live, '-node-')))];
        $dead = "$dir/$prefix-node-" . getmypid() . '-1.state'; // our pid, another start time: a gone node
        $deadStore = "$dir/$prefix-node-" . getmypid() . '-1.store'; // the same node's Store table
        $foreign = "$dir/$prefix-node-custom.state"; // a KILN_NODE_ID node: never swept
        foreach ([$live, $dead, $deadStore, $foreign] as $file) {
            touch($file);
        }
        try {
            self::assertGreaterThanOrEqual(2, NodeState::sweep());
            self::assertFileExists($live);
            self::assertFileDoesNotExist($dead);
            self::assertFileDoesNotExist($deadStore);
            self::assertFileExists($foreign);
        } finally {
            @unlink($dead);
            @unlink($deadStore);
            @unlink($foreign);
        }
    }

    public function testStoreReturnsTheNodesStorePerProcessAndSetStoreReplacesIt(): void
    {
        $store = NodeState::store();
        self::assertSame($store, NodeState::store());
        self::assertTrue(ApcuState::available(), 'APCu must be loaded and on: run `make test`, or php -d apc.enable_cli=1 vendor/bin/phpunit');
        self::assertInstanceOf(ApcuStore::class, $store);
        $mine = new TableStore(MemoryTable::file(sys_get_temp_dir() . '/unused-store'));
        NodeState::setStore($mine);
        try {
            self::assertSame($mine, NodeState::store());
        } finally {
            NodeState::setStore(null);
        }
        self::assertNotSame($mine, NodeState::store());
    }

    public function testGetReturnsOneStorePerProcessAndSetReplacesIt(): void
    {
        self::assertSame(NodeState::get(), NodeState::get());
        $mine = MemoryTable::file(sys_get_temp_dir() . '/unused');
        NodeState::set($mine);
        self::assertSame($mine, NodeState::get());
    }
}
