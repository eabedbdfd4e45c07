<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Cli;

use Kiln\Cli\JitLauncher;
use Kiln\Cli\Options;
use Kiln\Cli\ServeOptions;
use Kiln\Cli\UsageException;
use Kiln\Redis\RedisMode;
use Kiln\Server\ListenerMode;
use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;

final class ServeOptionsTest extends TestCase
{
    private const APP = __DIR__ . '/../../Fixtures/server/app.php';

    public function testTheWorkersRunTheJitUnlessTurnedOffAndDevRunsOpcacheWithoutItUnlessAskedFor(): void
    {
        self::assertSame('on', ServeOptions::parse([self::APP], [], '/srv')->jit);
        self::assertSame('off', ServeOptions::parse([self::APP, '--jit=off'], [], '/srv')->jit);
        self::assertSame(JitLauncher::OPCACHE_ONLY, ServeOptions::parse([self::APP, '--dev'], [], '/srv')->jit);
        self::assertSame('on', ServeOptions::parse([self::APP, '--dev', '--jit=on'], [], '/srv')->jit);
        self::assertSame('off', ServeOptions::parse([self::APP], ['KILN_DEV' => '1', 'KILN_JIT' => 'off'], '/srv')->jit);
        $this->expectException(UsageException::class);
        ServeOptions::parse([self::APP, '--jit=opcache'], [], '/srv');
    }

    public function testEveryOptionIsRead(): void
    {
        $options = ServeOptions::parse([self::APP, '--listen=0.0.0.0:9000', '--listen', '127.0.0.1:9001', '--workers=3',
            '--daemon', '--pid-file=run/k.pid', '--max-requests=5', '--max-memory=64M', '--drain-timeout=2.5',
            '--access-log=-', '--error-log=/var/log/k.log', '--log-level=debug', '--driver=select',
            '--connections=50', '--listener=reuseport', '--limit-header-timeout=5', '--limit-body-size=1024'], [], '/srv');
        $config = $options->config;
        self::assertSame(['0.0.0.0:9000', '127.0.0.1:9001'], array_map(static fn($a) => $a->authority(), $config->listen));
        self::assertSame(3, $config->workers);
        self::assertTrue($config->daemon);
        self::assertSame('/srv/run/k.pid', $config->pidFile);
        self::assertSame(5, $config->maxRequests);
        self::assertSame(64 << 20, $config->maxMemory);
        self::assertSame(2.5, $config->drainTimeout);
        self::assertSame('-', $config->accessLog);
        self::assertSame('/var/log/k.log', $config->errorLog);
        self::assertSame('select', $config->driver);
        self::assertSame(ListenerMode::ReusePort, $config->listenerMode);
        self::assertSame(50, $config->connections);
        self::assertSame(50, $options->limits->connections);
        self::assertSame(5.0, $options->limits->headerTimeout);
        self::assertSame(1024, $options->limits->bodySize);
        self::assertSame(realpath(self::APP), $options->target->path);
    }

    public function testWebSocketOptionsAreReadFromTheCommandLineAndTheEnvironment(): void
    {
        $default = ServeOptions::parse([self::APP], [], '/srv');
        self::assertFalse($default->webSocket->deflate);
        self::assertSame([], $default->webSocket->origins);
        self::assertSame(1048576, $default->limits->wsMessageBytes);

        $options = ServeOptions::parse([self::APP, '--ws-deflate', '--ws-origins=https://a.example, HTTPS://B.example:8443/',
            '--limit-ws-message-bytes=4096', '--limit-ws-write-buffer=8192', '--limit-ws-idle-timeout=20', '--limit-ws-close-timeout=2'], [], '/srv');
        self::assertTrue($options->webSocket->deflate);
        self::assertSame(['https://a.example', 'https://b.example:8443'], $options->webSocket->origins);
        self::assertSame(4096, $options->limits->wsMessageBytes);
        self::assertSame(8192, $options->limits->wsWriteBuffer);
        self::assertSame(20.0, $options->limits->wsIdleTimeout);
        self::assertSame(2.0, $options->limits->wsCloseTimeout);

        $fromEnv = ServeOptions::parse([self::APP], ['KILN_WS_DEFLATE' => '1', 'KILN_WS_ORIGINS' => 'https://a.example,https://c.example',
            'KILN_LIMIT_WS_MESSAGE_BYTES' => '2048'], '/srv');
        self::assertTrue($fromEnv->webSocket->deflate);
        self::assertSame(['https://a.example', 'https://c.example'], $fromEnv->webSocket->origins);
        self::assertSame(2048, $fromEnv->limits->wsMessageBytes);
    }

    public function testAWebSocketOriginThatIsNoOriginIsAUsageError(): void
    {
        $this->expectException(UsageException::class);
        $this->expectExceptionMessage('scheme://host[:port]');
        ServeOptions::parse([self::APP, '--ws-origins=example.com/path'], [], '/srv');
    }

    public function testRedisIsReadFromEachOfItsThreeFormsAndFromTheEnvironment(): void
    {
        self::assertNull(ServeOptions::parse([self::APP], [], '/srv')->redis);
        $single = ServeOptions::parse([self::APP, '--redis=redis://:secret@10.0.0.5:6380/2'], [], '/srv')->redis;
        self::assertNotNull($single);
        self::assertSame(RedisMode::Single, $single->mode);
        self::assertSame('10.0.0.5', $single->endpoints[0]->host);
        self::assertSame(6380, $single->endpoints[0]->port);
        self::assertSame(2, $single->database);
        self::assertSame('secret', $single->password);
        $sentinel = ServeOptions::parse([self::APP, '--redis-sentinel=s1:26379,s2:26380/main'], [], '/srv')->redis;
        self::assertNotNull($sentinel);
        self::assertSame(RedisMode::Sentinel, $sentinel->mode);
        self::assertSame('main', $sentinel->masterName);
        self::assertCount(2, $sentinel->endpoints);
        // A cluster's hosts hold commas: in env, options of the redis family are split on `;` only.
        $cluster = ServeOptions::parse([self::APP], ['KILN_REDIS' => 'redis+cluster://c1:7000,c2:7001,c3:7002'], '/srv')->redis;
        self::assertNotNull($cluster);
        self::assertSame(RedisMode::Cluster, $cluster->mode);
        self::assertCount(3, $cluster->endpoints);
    }

    public function testABadRedisSettingIsAUsageErrorThatNamesTheOption(): void
    {
        foreach ([
            [['--redis=http://example.com'], '--redis: Not a Redis URI'],
            [['--redis=redis://a', '--redis-cluster=b:7000'], 'Give one of --redis, --redis-sentinel and --redis-cluster'],
        ] as [$args, $message]) {
            try {
                ServeOptions::parse([self::APP, ...$args], [], '/srv');
                self::fail('accepted ' . implode(' ', $args));
            } catch (UsageException $e) {
                self::assertStringContainsString($message, $e->getMessage());
            }
        }
    }

    public function testEnvironmentFillsWhatTheCommandLineLeavesOut(): void
    {
        $env = ['KILN_WORKERS' => '4', 'KILN_MAX_REQUESTS' => '7', 'KILN_LISTEN' => '127.0.0.1:1,127.0.0.1:2',
            'KILN_DAEMON' => 'false', 'KILN_LIMIT_HEADER_TIMEOUT' => '3', 'KILN_ACCESS_LOG' => 'off'];
        $options = ServeOptions::parse([self::APP, '--workers=2'], $env, '/');
        self::assertSame(2, $options->config->workers, 'the command line wins');
        self::assertSame(7, $options->config->maxRequests);
        self::assertCount(2, $options->config->listen);
        self::assertFalse($options->config->daemon);
        self::assertSame(3.0, $options->limits->headerTimeout);
        self::assertNull($options->config->accessLog);
    }

    public function testTheStallTimeoutIsReadFromTheCommandLineOrTheEnvironmentAndZeroTurnsItOff(): void
    {
        self::assertSame(60.0, ServeOptions::parse([self::APP], [], '/')->config->stallTimeout);
        self::assertSame(2.5, ServeOptions::parse([self::APP, '--stall-timeout=2.5'], ['KILN_STALL_TIMEOUT' => '9'], '/')->config->stallTimeout);
        self::assertSame(9.0, ServeOptions::parse([self::APP], ['KILN_STALL_TIMEOUT' => '9'], '/')->config->stallTimeout);
        self::assertSame(0.0, ServeOptions::parse([self::APP, '--stall-timeout=0'], [], '/')->config->stallTimeout);
    }

    public function testTheStallTimeoutIsOffUnderDevOrWithXdebugsStepDebuggerUnlessGiven(): void
    {
        self::assertSame(0.0, ServeOptions::parse([self::APP, '--dev'], [], '/')->config->stallTimeout, 'a breakpoint would end the worker');
        self::assertSame(0.0, ServeOptions::parse([self::APP], ['XDEBUG_MODE' => 'develop,debug'], '/')->config->stallTimeout);
        self::assertSame(60.0, ServeOptions::parse([self::APP], ['XDEBUG_MODE' => 'develop,coverage'], '/')->config->stallTimeout);
        self::assertSame(5.0, ServeOptions::parse([self::APP, '--dev', '--stall-timeout=5'], [], '/')->config->stallTimeout);
        self::assertSame(9.0, ServeOptions::parse([self::APP], ['XDEBUG_MODE' => 'debug', 'KILN_STALL_TIMEOUT' => '9'], '/')->config->stallTimeout);
    }

    public function testTheCommandLineLimitWinsOverEnvironment(): void
    {
        $options = ServeOptions::parse([self::APP, '--limit-header-timeout=9'], ['KILN_LIMIT_HEADER_TIMEOUT' => '3'], '/');
        self::assertSame(9.0, $options->limits->headerTimeout);
    }

    /** @return iterable<string, array{list<string>, string}> */
    public static function mistakes(): iterable
    {
        yield 'no path' => [['--workers=2'], 'PATH is missing'];
        yield 'unknown option' => [[self::APP, '--wrokers=2'], 'Unknown option --wrokers'];
        yield 'short option' => [[self::APP, '-w'], 'Unknown option -w'];
        yield 'not a number' => [[self::APP, '--workers=two'], "--workers must be a whole number, got 'two'"];
        yield 'zero workers' => [[self::APP, '--workers=0'], '--workers must be between 1 and 1024'];
        yield 'missing value' => [[self::APP, '--listen'], 'needs a value'];
        yield 'bad listen' => [[self::APP, '--listen=nowhere'], 'use HOST:PORT'];
        yield 'unknown limit' => [[self::APP, '--limit-speed=3'], 'Unknown limit --limit-speed; known limits: --limit-request-line, '];
        yield 'bad limit' => [[self::APP, '--limit-header-timeout=soon'], 'must be a number'];
        yield 'bad flag' => [[self::APP, '--daemon=maybe'], 'must be true or false'];
        yield 'two paths' => [[self::APP, self::APP], 'Only one PATH'];
        yield 'bad size' => [[self::APP, '--max-memory=lots'], 'suffix K, M or G'];
        yield 'stall timeout not a number' => [[self::APP, '--stall-timeout=soon'], "--stall-timeout must be a number of seconds, got 'soon'"];
        yield 'stall timeout negative' => [[self::APP, '--stall-timeout=-5'], "--stall-timeout must be a number of seconds, got '-5'"];
        yield 'stall timeout too short' => [[self::APP, '--stall-timeout=0.2'], '--stall-timeout must be 0 (off) or at least 0.5 seconds, got 0.2'];
        yield 'no connections, named as typed' => [[self::APP, '--connections=0'], '--connections must be 1 or more, got 0'];
        yield 'one address twice' => [[self::APP, '--listen=127.0.0.1:8081', '--listen=127.0.0.1:8081'], '--listen=127.0.0.1:8081 is given twice'];
    }

    public function testTwoListenersOnPortZeroAreTwoFreePorts(): void
    {
        self::assertCount(2, ServeOptions::parse([self::APP, '--listen=127.0.0.1:0', '--listen=127.0.0.1:0'], [], '/')->config->listen);
    }

    /** @return iterable<string, array{array<string, string>, string}> */
    public static function environmentMistakes(): iterable
    {
        yield 'not a number' => [['KILN_WORKERS' => 'abc'], "KILN_WORKERS must be a whole number, got 'abc'"];
        yield 'out of range' => [['KILN_WORKERS' => '0'], 'KILN_WORKERS must be between 1 and 1024, got 0'];
        yield 'no connections' => [['KILN_CONNECTIONS' => '0'], 'KILN_CONNECTIONS must be 1 or more, got 0'];
        yield 'a limit' => [['KILN_LIMIT_BODY_SIZE' => '0'], 'KILN_LIMIT_BODY_SIZE must be greater than zero, got 0'];
        yield 'a flag' => [['KILN_DAEMON' => 'maybe'], "KILN_DAEMON must be true or false, got 'maybe'"];
        yield 'a choice' => [['KILN_JIT' => 'maybe'], "KILN_JIT must be on or off, got 'maybe'"];
    }

    /** @param array<string, string> $env */
    #[DataProvider('environmentMistakes')]
    public function testABadValueFromTheEnvironmentIsNamedAsTheVariable(array $env, string $message): void
    {
        $this->expectException(UsageException::class);
        $this->expectExceptionMessage($message);
        ServeOptions::parse([self::APP], $env, __DIR__);
    }

    public function testAnOptionGivenOnTheCommandLineKeepsItsNameWhenOthersComeFromTheEnvironment(): void
    {
        $this->expectExceptionMessage("--workers must be a whole number, got 'two'");
        ServeOptions::parse([self::APP, '--workers=two'], ['KILN_MAX_REQUESTS' => '5', 'KILN_WORKERS' => '3'], __DIR__);
    }

    /** @param list<string> $args */
    #[DataProvider('mistakes')]
    public function testMistakesAreUsageErrorsThatSayWhatToDo(array $args, string $message): void
    {
        $this->expectException(UsageException::class);
        $this->expectExceptionMessage($message);
        ServeOptions::parse($args, [], __DIR__);
    }

    public function testEnvironmentNamesAreUpperSnake(): void
    {
        self::assertSame('KILN_MAX_REQUESTS', Options::envName('max-requests'));
        self::assertSame('KILN_PID_FILE', Options::envName('pid-file'));
    }
}
