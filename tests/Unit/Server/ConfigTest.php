<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Server;

use Kiln\Server\Config;
use Kiln\Server\ListenAddress;
use Kiln\Server\ListenerMode;
use Kiln\Server\LogLevel;
use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;

final class ConfigTest extends TestCase
{
    public function testDefaultsAreSafeForOneMachine(): void
    {
        $config = Config::create(workers: 3);
        self::assertSame('127.0.0.1', $config->listen[0]->host);
        self::assertSame(8080, $config->listen[0]->port);
        self::assertSame(3, $config->workers);
        self::assertSame(0, $config->maxRequests);
        self::assertSame(256 << 20, $config->maxMemory);
        self::assertSame(30.0, $config->drainTimeout);
        self::assertSame(ListenerMode::Shared, $config->listenerMode);
        self::assertSame(LogLevel::Info, $config->logLevel);
        self::assertNull($config->accessLog);
    }

    public function testWorkersDefaultToTheCpuCount(): void
    {
        self::assertSame(Config::cpuCount(), Config::create()->workers);
        self::assertGreaterThanOrEqual(1, Config::cpuCount());
        self::assertSame(1, Config::cpuCount('/nonexistent/cpuinfo'));
    }

    /** @return iterable<string, array{array<string, mixed>, string}> */
    public static function invalid(): iterable
    {
        yield 'no workers' => [['workers' => 0], 'Workers must be between 1 and 1024'];
        yield 'negative max requests' => [['maxRequests' => -1], 'Max requests must be 0'];
        yield 'bad size' => [['maxMemory' => '12X'], "use a number of bytes or a suffix K, M or G"];
        yield 'negative drain' => [['drainTimeout' => -1.0], 'Drain timeout must be 0 or more'];
        yield 'bad driver' => [['driver' => 'kqueue'], 'use auto, select or epoll'];
        yield 'bad listener' => [['listenerMode' => 'magic'], 'use shared or reuseport'];
        yield 'bad level' => [['logLevel' => 'loud'], 'use one of: debug, info, warning, error'];
        yield 'no connections' => [['connections' => 0], 'Connections must be at least 1'];
        yield 'bad address' => [['listen' => ['localhost']], 'use HOST:PORT'];
        yield 'port too big' => [['listen' => ['127.0.0.1:70000']], 'between 0 and 65535'];
        yield 'empty listen' => [['listen' => []], 'At least one listen address'];
        yield 'empty pid file' => [['pidFile' => ''], 'give a file path'];
    }

    /** @param array<string, mixed> $args */
    #[DataProvider('invalid')]
    public function testInvalidSettingsAreRejectedWithAHint(array $args, string $message): void
    {
        $this->expectException(\ValueError::class);
        $this->expectExceptionMessage($message);
        Config::create(...$args);
    }

    public function testSizesAcceptSuffixes(): void
    {
        self::assertSame(128 << 20, Config::parseSize('128M'));
        self::assertSame(1 << 30, Config::parseSize('1g'));
        self::assertSame(512 << 10, Config::parseSize('512K'));
        self::assertSame(1000, Config::parseSize('1000'));
    }

    public function testThePidFileIsKeyedByTheBoundAddress(): void
    {
        $config = Config::create(listen: ['127.0.0.1:0'], workers: 1);
        $path = $config->pidFilePath(new ListenAddress('127.0.0.1', 43210));
        self::assertStringEndsWith('/kiln-127.0.0.1-43210.pid', $path);
        self::assertSame('/run/k.pid', Config::create(workers: 1, pidFile: '/run/k.pid')->pidFilePath());
    }

    public function testADaemonLogsBesideItsPidFile(): void
    {
        self::assertSame('/run/kiln.log', Config::create(workers: 1, daemon: true)->errorLogPath('/run/k.pid'));
        self::assertSame('-', Config::create(workers: 1)->errorLogPath('/run/k.pid'));
        self::assertSame('/x.log', Config::create(workers: 1, daemon: true, errorLog: '/x.log')->errorLogPath('/run/k.pid'));
    }

    public function testIpv6AddressesAreBracketed(): void
    {
        $address = ListenAddress::parse('[::1]:8080');
        self::assertSame('::1', $address->host);
        self::assertSame('http://[::1]:8080', $address->url());
    }
}
