<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Site;

use Kiln\Site\SiteConfig;
use Kiln\Site\Tier;
use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;

final class SiteConfigTest extends TestCase
{
    private static string $bin = '';

    public static function setUpBeforeClass(): void
    {
        self::$bin = sys_get_temp_dir() . '/kiln-site-bin-' . bin2hex(random_bytes(4));
        mkdir(self::$bin);
        file_put_contents(self::$bin . '/php-cgi', "#!/bin/sh\n");
        chmod(self::$bin . '/php-cgi', 0o755);
        file_put_contents(self::$bin . '/not-executable', '');
    }

    public static function tearDownAfterClass(): void
    {
        foreach (['php-cgi', 'not-executable'] as $file) {
            @unlink(self::$bin . "/$file");
        }
        @rmdir(self::$bin);
    }

    public function testASequentialSiteWhoseTimeLimitIsNoneOrNotBelowTheStallTimeoutIsWarnedAbout(): void
    {
        $none = SiteConfig::create(tier: 'sequential', timeLimit: 0.0)->stallTimeoutWarning(60.0);
        self::assertNotNull($none);
        self::assertStringStartsWith('--time-limit=0 (none) with --stall-timeout=60: the sequential tier runs scripts on the worker', $none);
        $equal = SiteConfig::create(tier: 'sequential', timeLimit: 60.0)->stallTimeoutWarning(60.0);
        self::assertNotNull($equal);
        self::assertStringStartsWith('--time-limit=60 is not below --stall-timeout=60:', $equal);
        self::assertStringEndsWith('set --time-limit below --stall-timeout, or raise --stall-timeout (0: off)', $equal);
        self::assertNotNull(SiteConfig::create(tier: 'sequential', timeLimit: 90.0)->stallTimeoutWarning(60.0));
    }

    public function testNoWarningWhenTheTimeLimitEndsAScriptFirstTheStallTimeoutIsOffOrScriptsRunOffTheLoop(): void
    {
        self::assertNull(SiteConfig::create(tier: 'sequential', timeLimit: 30.0)->stallTimeoutWarning(60.0));
        self::assertNull(SiteConfig::create(tier: 'sequential', timeLimit: 0.0)->stallTimeoutWarning(0.0));
        self::assertNull(SiteConfig::create(tier: 'fork', timeLimit: 0.0)->stallTimeoutWarning(60.0));
    }

    public function testTheDefaults(): void
    {
        $config = SiteConfig::create(searchPath: '');
        self::assertSame(Tier::Sequential, $config->tier);
        self::assertSame('auto', $config->requestedTier);
        self::assertSame(30.0, $config->timeLimit);
        self::assertSame(4, $config->poolSize);
        self::assertSame(10_000, $config->poolMaxRequests);
        self::assertSame(512, $config->poolQueue);
        self::assertNull($config->phpCgi);
        self::assertSame([], $config->phpIni);
        self::assertSame([], $config->passEnv);
        self::assertNull($config->fastcgi);
        self::assertSame([], $config->fastcgiMap);
        self::assertNull($config->cgiBin);
        self::assertSame(8, $config->forkMax);
        self::assertSame('/index.php', $config->frontController);
        self::assertSame(['.php'], $config->scriptExtensions());
    }

    public function testHtaccessFilesAreReadUnlessTurnedOffAndAnotherTierKeepsThatChoice(): void
    {
        self::assertTrue(SiteConfig::create(searchPath: '')->htaccess);
        $off = SiteConfig::create(tier: 'sequential', searchPath: '', htaccess: false);
        self::assertFalse($off->htaccess);
        self::assertFalse($off->withTier(Tier::Sequential)->htaccess);
    }

    public function testAutoIsIsolatedWhenPhpCgiIsInThePath(): void
    {
        $config = SiteConfig::create(searchPath: '/nonexistent:' . self::$bin);
        self::assertSame(Tier::Isolated, $config->tier);
        self::assertSame(self::$bin . '/php-cgi', $config->phpCgi);
    }

    public function testAutoIsFastCgiWhenAnUpstreamIsGiven(): void
    {
        self::assertSame(Tier::FastCgi, SiteConfig::create(fastcgi: '127.0.0.1:9000', searchPath: self::$bin)->tier);
    }

    public function testAnExplicitTierIsKept(): void
    {
        $config = SiteConfig::create(tier: 'sequential', searchPath: self::$bin);
        self::assertSame(Tier::Sequential, $config->tier);
        self::assertSame('sequential', $config->requestedTier);
        self::assertSame(Tier::Fork, SiteConfig::create(tier: 'fork', searchPath: '')->tier);
    }

    public function testEverySettingIsRead(): void
    {
        $config = SiteConfig::create(
            'isolated',
            5.5,
            4,
            500,
            0,
            self::$bin . '/php-cgi',
            ['memory_limit' => '1G'],
            ['HOME'],
            'unix:run/fpm.sock',
            ['py' => '127.0.0.1:9001', '.pl' => 'tcp://[::1]:9002'],
            self::$bin,
            3,
            null,
            '',
            '/srv',
        );
        self::assertSame(Tier::Isolated, $config->tier);
        self::assertSame(5.5, $config->timeLimit);
        self::assertSame(4, $config->poolSize);
        self::assertSame(500, $config->poolMaxRequests);
        self::assertSame(0, $config->poolQueue);
        self::assertSame(['memory_limit' => '1G'], $config->phpIni);
        self::assertSame(['HOME'], $config->passEnv);
        self::assertSame('unix:/srv/run/fpm.sock', $config->fastcgi);
        self::assertSame(['.py' => '127.0.0.1:9001', '.pl' => '[::1]:9002'], $config->fastcgiMap);
        self::assertSame(realpath(self::$bin), $config->cgiBin);
        self::assertSame(3, $config->forkMax);
        self::assertNull($config->frontController);
        self::assertSame(['.php', '.py', '.pl'], $config->scriptExtensions());
    }

    public function testAPhpCgiNameIsLookedUpInThePath(): void
    {
        self::assertSame(self::$bin . '/php-cgi', SiteConfig::create(phpCgi: 'php-cgi', searchPath: self::$bin)->phpCgi);
    }

    public function testSocketUris(): void
    {
        self::assertSame('tcp://127.0.0.1:9000', SiteConfig::socketUri('127.0.0.1:9000'));
        self::assertSame('unix:///run/php/fpm.sock', SiteConfig::socketUri('unix:/run/php/fpm.sock'));
    }

    /** @return iterable<string, array{array<string, mixed>, string}> */
    public static function mistakes(): iterable
    {
        yield 'unknown tier' => [['tier' => 'turbo'], "--tier must be one of auto, sequential, isolated, fork, fastcgi, got 'turbo'"];
        yield 'cgi is not a tier for scripts' => [['tier' => 'cgi'], '--tier must be one of'];
        yield 'isolated without php-cgi' => [['tier' => 'isolated', 'searchPath' => ''], '--tier=isolated needs php-cgi'];
        yield 'fastcgi without address' => [['tier' => 'fastcgi'], '--tier=fastcgi needs the upstream address'];
        yield 'negative time limit' => [['timeLimit' => -1.0], '--time-limit must be a number of seconds'];
        yield 'no pool' => [['poolSize' => 0], '--pool-size must be between 1 and 1024, got 0'];
        yield 'no max requests' => [['poolMaxRequests' => 0], '--pool-max-requests must be at least 1'];
        yield 'negative queue' => [['poolQueue' => -1], '--pool-queue must be between 0'];
        yield 'no forks' => [['forkMax' => 0], '--fork-max must be between 1'];
        yield 'php-cgi missing' => [['phpCgi' => '/nonexistent/php-cgi'], "--php-cgi must be an executable file, got '/nonexistent/php-cgi'"];
        yield 'php-cgi not executable' => [['phpCgi' => 'NOT-EXECUTABLE'], '--php-cgi must be an executable file'];
        yield 'php-cgi name not in path' => [['phpCgi' => 'php-cgi7'], "'php-cgi7' is not in PATH"];
        yield 'bad ini name' => [['phpIni' => ['bad name' => '1']], '--php-ini must be NAME=VALUE'];
        yield 'ini value with a newline' => [['phpIni' => ['a' => "1\nb=2"]], '--php-ini must be NAME=VALUE'];
        yield 'bad env name' => [['passEnv' => ['A-B']], "--pass-env must be an environment variable name, got 'A-B'"];
        yield 'address without port' => [['fastcgi' => '127.0.0.1'], "--fastcgi must be HOST:PORT or unix:/path/to.sock, got '127.0.0.1'"];
        yield 'port out of range' => [['fastcgi' => 'localhost:70000'], '--fastcgi must be HOST:PORT'];
        yield 'empty unix path' => [['fastcgi' => 'unix:'], 'a unix socket address is unix:/path'];
        yield 'bad map extension' => [['fastcgiMap' => ['.p/y' => '127.0.0.1:1']], '--fastcgi-map must be EXT=ADDR'];
        yield 'bad map address' => [['fastcgiMap' => ['.py' => 'nowhere']], '--fastcgi-map must be HOST:PORT'];
        yield 'missing cgi-bin' => [['cgiBin' => '/nonexistent/cgi-bin'], "--cgi-bin must be an existing directory, got '/nonexistent/cgi-bin'"];
        yield 'relative front controller' => [['frontController' => 'index.php'], '--front-controller must be a URL path'];
    }

    /** @param array<string, mixed> $arguments */
    #[DataProvider('mistakes')]
    public function testBadValuesAreRefusedWithTheOptionNamed(array $arguments, string $message): void
    {
        if (($arguments['phpCgi'] ?? null) === 'NOT-EXECUTABLE') {
            $arguments['phpCgi'] = self::$bin . '/not-executable';
        }
        $this->expectException(\ValueError::class);
        $this->expectExceptionMessage($message);
        SiteConfig::create(...$arguments);
    }
}
