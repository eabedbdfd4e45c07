<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Cli;

use Kiln\Tests\Support\HttpClient;
use Kiln\Tests\Support\KilnProcess;
use PHPUnit\Framework\TestCase;

final class JitTest extends TestCase
{
    public function testWorkersRunWithTheJitByDefault(): void
    {
        if (!\extension_loaded('Zend OPcache')) {
            self::markTestSkipped('opcache is not installed');
        }
        $server = KilnProcess::start(\dirname(__DIR__, 2) . '/Fixtures/http/app.php', ['--workers=1']);
        try {
            self::assertSame('{"jit":true}', HttpClient::get($server->baseUrl() . '/jit')['body']);
        } finally {
            $server->stop();
        }
    }

    public function testJitOffLeavesPhpAsItWasStarted(): void
    {
        $server = KilnProcess::start(\dirname(__DIR__, 2) . '/Fixtures/http/app.php', ['--workers=1', '--jit=off']);
        try {
            self::assertSame('{"jit":false}', HttpClient::get($server->baseUrl() . '/jit')['body']);
        } finally {
            $server->stop();
        }
    }

    public function testABadJitValueIsAUsageError(): void
    {
        [$code, , $stderr] = KilnProcess::run(['serve', \dirname(__DIR__, 2) . '/Fixtures/http/app.php', '--jit=maybe'], 10.0);
        self::assertSame(2, $code);
        self::assertStringContainsString('--jit must be on or off', $stderr);
    }
}
