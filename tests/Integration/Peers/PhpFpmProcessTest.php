<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Peers;

use Kiln\Tests\Support\PeerProcess;
use Kiln\Tests\Support\PhpFpmProcess;
use PHPUnit\Framework\TestCase;

/** The real php-fpm the parity and upstream tests use starts, listens where asked, and stops completely. */
final class PhpFpmProcessTest extends TestCase
{
    public function testItListensOnATcpPortAndAUnixSocketWithTheAskedNumberOfChildrenEach(): void
    {
        $fpm = PhpFpmProcess::start(children: 3, tcp: true, unix: true);
        self::assertMatchesRegularExpression('~^127\.0\.0\.1:\d+$~', $fpm->address());
        self::assertTrue(PeerProcess::canConnect('tcp://' . $fpm->address()), $fpm->diagnostics());
        self::assertTrue(PeerProcess::canConnect('unix://' . $fpm->socketPath()), $fpm->diagnostics());
        $deadline = microtime(true) + 5.0;
        while (\count($fpm->childPids()) < 6 && microtime(true) < $deadline) {
            usleep(20_000);
        }
        self::assertCount(6, $fpm->childPids(), "two pools (tcp, unix) of 3 static children\n" . $fpm->diagnostics());
        $fpm->stop();
    }

    public function testStopEndsTheMasterAndEveryChildAndRemovesItsTempDir(): void
    {
        $fpm = PhpFpmProcess::start(children: 2, tcp: false, unix: true);
        $pids = [$fpm->pid(), ...$fpm->childPids()];
        $dir = $fpm->directory();
        self::assertSame('unix:' . $fpm->socketPath(), $fpm->address());
        $fpm->stop();
        foreach ($pids as $pid) {
            self::assertFalse(file_exists("/proc/$pid"), "php-fpm process $pid is still there after stop()");
        }
        self::assertDirectoryDoesNotExist($dir);
        self::assertFalse($fpm->isRunning());
    }

    public function testAPoolThatCannotStartFailsWithPhpFpmsOwnMessage(): void
    {
        if (!PeerProcess::isRoot()) {
            self::markTestSkipped('php-fpm only switches users (and so only fails on an unknown one) when started as root');
        }
        try {
            PhpFpmProcess::start(user: 'kiln-no-such-user', timeout: 5.0);
            self::fail('php-fpm started with an unknown pool user');
        } catch (\RuntimeException $e) {
            self::assertStringContainsString('php-fpm exited', $e->getMessage());
            self::assertStringContainsString('kiln-no-such-user', $e->getMessage());
        }
    }
}
