<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Server;

use Kiln\Server\Config;
use Kiln\Server\ConnectionPlan;
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
        self::assertSame(60.0, $config->stallTimeout, 'above the sequential tier\'s --time-limit of 30 s');
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
        yield 'no workers' => [['workers' => 0], '--workers must be between 1 and 1024'];
        yield 'negative max requests' => [['maxRequests' => -1], '--max-requests must be 0'];
        yield 'bad size' => [['maxMemory' => '12X'], "use a number of bytes or a suffix K, M or G"];
        yield 'negative drain' => [['drainTimeout' => -1.0], '--drain-timeout must be 0 or more'];
        yield 'negative stall timeout' => [['stallTimeout' => -1.0], '--stall-timeout must be 0 (off) or at least 0.5 seconds, got -1'];
        yield 'stall timeout shorter than the heartbeat can tell' => [['stallTimeout' => 0.1], '--stall-timeout must be 0 (off) or at least 0.5 seconds, got 0.1'];
        yield 'infinite stall timeout' => [['stallTimeout' => INF], '--stall-timeout must be 0 (off) or at least 0.5 seconds'];
        yield 'bad driver' => [['driver' => 'kqueue'], 'use auto, select or epoll'];
        yield 'bad listener' => [['listenerMode' => 'magic'], 'use shared or reuseport'];
        yield 'bad level' => [['logLevel' => 'loud'], 'use one of: debug, info, warning, error'];
        yield 'no connections' => [['connections' => 0], '--connections must be at least 1'];
        yield 'bad address' => [['listen' => ['localhost']], 'use HOST:PORT'];
        yield 'port too big' => [['listen' => ['127.0.0.1:70000']], 'between 0 and 65535'];
        yield 'empty listen' => [['listen' => []], 'At least one listen address'];
        yield 'empty pid file' => [['pidFile' => ''], 'give a file path'];
        yield 'memory limit too small' => [['memoryLimit' => '8M'], '--memory-limit must be at least 16M (or -1 for none), got 8M'];
        yield 'memory limit not above max memory' => [['memoryLimit' => '256M'], '--memory-limit (256M) must be above --max-memory (256M)'];
        yield 'bad memory limit' => [['memoryLimit' => 'lots'], 'use a number of bytes or a suffix K, M or G'];
    }

    public function testTheWorkersMemoryLimitIsTheOptionElsePhpsOwnElseFourTimesMaxMemory(): void
    {
        self::assertSame(512 << 20, Config::create(memoryLimit: '512M')->workerMemoryLimit('128M'), 'the option wins');
        self::assertSame(-1, Config::create(memoryLimit: '-1')->workerMemoryLimit('128M'), 'none, when asked');
        self::assertSame(-1, Config::create(memoryLimit: -1, maxMemory: 0)->workerMemoryLimit('-1'));
        self::assertSame(300 << 20, Config::create()->workerMemoryLimit('300M'), "PHP's own");
        self::assertSame(128 << 20, Config::create()->workerMemoryLimit('128M'), 'a limit the user configured, even below --max-memory');
        self::assertSame(1 << 30, Config::create()->workerMemoryLimit(false), "nothing configured (PHP's built-in 128M, no php.ini): 4 x 256M");
        self::assertSame(1 << 30, Config::create()->workerMemoryLimit('-1'), "Debian's CLI php.ini sets none: 4 x 256M");
        self::assertSame(1 << 30, Config::create()->workerMemoryLimit(''));
        self::assertSame(400 << 20, Config::create(maxMemory: '100M')->workerMemoryLimit('-1'));
        self::assertSame(Config::DEFAULT_MEMORY_LIMIT, Config::create(maxMemory: 0)->workerMemoryLimit('-1'));
        self::assertSame(64 << 20, Config::create(maxMemory: 0, memoryLimit: '64M')->workerMemoryLimit('-1'), 'any size when --max-memory is off');
        self::assertSame(2 << 30, Config::create(memoryLimit: '2G')->withConnections(ConnectionPlan::decide('select', 512, 64, null, 4096, 4096))->workerMemoryLimit('-1'), 'kept by withConnections()');
    }

    public function testSizesAreSpelledAsTheOptionsTakeThem(): void
    {
        self::assertSame('1G', Config::size(1 << 30));
        self::assertSame('300M', Config::size(300 << 20));
        self::assertSame('1536M', Config::size(1536 << 20));
        self::assertSame('12K', Config::size(12 << 10));
        self::assertSame('1000', Config::size(1000));
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
        self::assertSame('/run/k.log', Config::create(workers: 1, daemon: true)->errorLogPath('/run/k.pid'));
        self::assertSame('/tmp/kiln-127.0.0.1-8080.log', Config::create(workers: 1, daemon: true)->errorLogPath('/tmp/kiln-127.0.0.1-8080.pid'), 'two daemons, two logs');
        self::assertSame('/run/kiln-pid.log', Config::create(workers: 1, daemon: true)->errorLogPath('/run/kiln-pid'));
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
