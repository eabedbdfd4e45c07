<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Server;

use Kiln\Server\SidecarLauncher;
use PHPUnit\Framework\TestCase;

/** How a batch sidecar is started: chrt, tried once, or the reason it cannot be. */
final class SidecarLauncherTest extends TestCase
{
    public function testWithoutChrtInPathThereIsNoPrefixAndTheReasonSaysSo(): void
    {
        self::assertSame('chrt (util-linux) is not in PATH', SidecarLauncher::batchPrefix(__DIR__));
    }

    public function testAChrtThatFailsGivesItsOwnFirstLineAsTheReason(): void
    {
        $bin = (string) realpath(__DIR__ . '/../../Fixtures/no-batch');
        self::assertSame("`$bin/chrt -b 0` failed: chrt: failed to set pid 0's policy: Operation not permitted", SidecarLauncher::batchPrefix($bin));
    }

    public function testAChrtThatWorksIsThePrefixInTheShortFormBusyBoxTakesToo(): void
    {
        $bin = (string) realpath(__DIR__ . '/../../Fixtures/batch-ok');
        self::assertSame(["$bin/chrt", '-b', '0'], SidecarLauncher::batchPrefix("$bin:" . getenv('PATH')));
    }
}
