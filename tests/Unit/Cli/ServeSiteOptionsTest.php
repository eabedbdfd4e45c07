<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Cli;

use Kiln\Cli\ServeOptions;
use Kiln\Cli\UsageException;
use Kiln\Site\Tier;
use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;

/** The document-root options of `kiln serve` (--tier and each tier's settings) read into a SiteConfig. */
final class ServeSiteOptionsTest extends TestCase
{
    private const APP = __DIR__ . '/../../Fixtures/server/app.php';

    private const CGI_BIN = __DIR__ . '/../../Fixtures';

    public function testEverySiteOptionIsRead(): void
    {
        $site = ServeOptions::parse([self::APP, '--tier=fork', '--time-limit=2.5', '--pool-size=3', '--pool-max-requests=500',
            '--pool-queue=10', '--php-cgi=' . PHP_BINARY, '--php-ini=memory_limit=1G', '--php-ini', 'display_errors=0',
            '--pass-env=HOME', '--pass-env=LANG', '--fastcgi=unix:run/fpm.sock', '--fastcgi-map=.py=127.0.0.1:9001',
            '--fastcgi-map=pl=127.0.0.1:9002', '--cgi-bin=' . self::CGI_BIN, '--fork-max=4', '--front-controller=/app.php'], [], '/srv')->site;
        self::assertSame(Tier::Fork, $site->tier);
        self::assertSame(2.5, $site->timeLimit);
        self::assertSame(3, $site->poolSize);
        self::assertSame(500, $site->poolMaxRequests);
        self::assertSame(10, $site->poolQueue);
        self::assertSame(PHP_BINARY, $site->phpCgi);
        self::assertSame(['memory_limit' => '1G', 'display_errors' => '0'], $site->phpIni);
        self::assertSame(['HOME', 'LANG'], $site->passEnv);
        self::assertSame('unix:/srv/run/fpm.sock', $site->fastcgi);
        self::assertSame(['.py' => '127.0.0.1:9001', '.pl' => '127.0.0.1:9002'], $site->fastcgiMap);
        self::assertSame(realpath(self::CGI_BIN), $site->cgiBin);
        self::assertSame(4, $site->forkMax);
        self::assertSame('/app.php', $site->frontController);
        self::assertFalse($site->poolJit, 'php-cgi children run without the JIT by default, as php-fpm does');
        self::assertTrue(ServeOptions::parse([self::APP, '--pool-jit=on'], [], '/srv')->site->poolJit);
        self::assertFalse(ServeOptions::parse([self::APP, '--jit=off', '--pool-jit=off'], [], '/srv')->site->poolJit);
        self::assertFalse($site->poolBatch, 'php-cgi children keep the server\'s scheduling policy by default');
        self::assertTrue(ServeOptions::parse([self::APP, '--pool-sched=batch'], [], '/srv')->site->poolBatch);
        self::assertFalse(ServeOptions::parse([self::APP, '--pool-sched=normal'], [], '/srv')->site->poolBatch);
        self::assertTrue(ServeOptions::parse([self::APP], ['KILN_POOL_SCHED' => 'batch'], '/srv')->site->poolBatch);
    }

    public function testAPoolPolicyOtherThanBatchOrNormalIsRefused(): void
    {
        $this->expectException(UsageException::class);
        $this->expectExceptionMessage("--pool-sched must be normal or batch, got 'fifo'");
        ServeOptions::parse([self::APP, '--pool-sched=fifo'], [], '/srv');
    }

    public function testEnvironmentFillsTheSiteOptions(): void
    {
        $env = ['KILN_TIER' => 'sequential', 'KILN_TIME_LIMIT' => '7', 'KILN_PHP_INI' => 'a=1,b=2', 'KILN_PASS_ENV' => 'HOME,LANG',
            'KILN_FRONT_CONTROLLER' => 'off', 'PATH' => ''];
        $site = ServeOptions::parse([self::APP, '--time-limit=9'], $env, '/')->site;
        self::assertSame(Tier::Sequential, $site->tier);
        self::assertSame(9.0, $site->timeLimit, 'the command line wins');
        self::assertSame(['a' => '1', 'b' => '2'], $site->phpIni);
        self::assertSame(['HOME', 'LANG'], $site->passEnv);
        self::assertNull($site->frontController);
    }

    public function testAutoLooksForPhpCgiInThePathGiven(): void
    {
        self::assertSame(Tier::Sequential, ServeOptions::parse([self::APP], ['PATH' => '/nonexistent'], '/')->site->tier);
        $dir = sys_get_temp_dir() . '/kiln-php-cgi-path-' . getmypid() . '-' . bin2hex(random_bytes(3));
        mkdir($dir);
        try {
            $versioned = "$dir/php-cgi" . PHP_MAJOR_VERSION . '.' . PHP_MINOR_VERSION;
            file_put_contents($versioned, "#!/bin/sh\n");
            self::assertSame(Tier::Sequential, ServeOptions::parse([self::APP], ['PATH' => "/nonexistent:$dir"], '/')->site->tier, 'not executable');
            chmod($versioned, 0o755);
            self::assertSame(Tier::Isolated, ServeOptions::parse([self::APP], ['PATH' => "/nonexistent:$dir"], '/')->site->tier, 'php-cgi' . PHP_MAJOR_VERSION . '.' . PHP_MINOR_VERSION);
            unlink($versioned);
            file_put_contents("$dir/php-cgi", "#!/bin/sh\n");
            chmod("$dir/php-cgi", 0o755);
            self::assertSame(Tier::Isolated, ServeOptions::parse([self::APP], ['PATH' => "/nonexistent:$dir"], '/')->site->tier, 'php-cgi');
        } finally {
            @unlink($versioned);
            @unlink("$dir/php-cgi");
            rmdir($dir);
        }
    }

    public function testCacheControlRulesAreKeptInTheOrderGiven(): void
    {
        $site = ServeOptions::parse([self::APP, '--cache-control=/build/=public, max-age=31536000, immutable',
            '--cache-control', '*.woff2,*.png=public, max-age=86400'], [], '/')->site;
        self::assertSame(['/build/=public, max-age=31536000, immutable', '*.woff2,*.png=public, max-age=86400'], $site->cacheControl);
        $policy = $site->cachePolicy();
        self::assertSame('public, max-age=31536000, immutable', $policy->for('/build/app.png'), 'first match wins');
        self::assertSame('public, max-age=86400', $policy->for('/img/app.png'));
        self::assertNull($policy->for('/index.html'));
        self::assertSame('no-store', $site->cachePolicy(['*.html=no-store'])->for('/index.html'), "site()'s rules come first");
        self::assertSame([], ServeOptions::parse([self::APP], [], '/')->site->cacheControl, 'no rules by default');
    }

    public function testCacheControlRulesInTheEnvironmentAreSeparatedBySemicolons(): void
    {
        $env = ['KILN_CACHE_CONTROL' => '/build/=public, max-age=31536000, immutable; *.png=public, max-age=86400;'];
        self::assertSame(['/build/=public, max-age=31536000, immutable', '*.png=public, max-age=86400'], ServeOptions::parse([self::APP], $env, '/')->site->cacheControl);
        self::assertSame(['/=no-cache'], ServeOptions::parse([self::APP, '--cache-control=/=no-cache'], $env, '/')->site->cacheControl, 'the command line wins');
    }

    public function testTrustedProxiesAreAListOfAddressesAndNetworks(): void
    {
        $site = ServeOptions::parse([self::APP, '--trusted-proxies=127.0.0.1, 10.0.0.0/8', '--trusted-proxies=::1'], [], '/')->site;
        self::assertSame(['127.0.0.1', '10.0.0.0/8', '::1'], $site->trustedProxies);
        self::assertSame(['192.0.2.1', '2001:db8::/32'], ServeOptions::parse([self::APP], ['KILN_TRUSTED_PROXIES' => '192.0.2.1,2001:db8::/32'], '/')->site->trustedProxies);
        self::assertSame([], ServeOptions::parse([self::APP], [], '/')->site->trustedProxies, 'no proxy is trusted by default');
    }

    public function testTheFrontControllerCanBeTurnedOff(): void
    {
        self::assertNull(ServeOptions::parse([self::APP, '--front-controller=off'], [], '/')->site->frontController);
        self::assertSame('/index.php', ServeOptions::parse([self::APP], [], '/')->site->frontController);
    }

    /** @return iterable<string, array{list<string>, string}> */
    public static function mistakes(): iterable
    {
        yield 'unknown tier' => [['--tier=turbo'], "--tier must be one of auto, sequential, isolated, fork, fastcgi, got 'turbo'"];
        yield 'isolated without php-cgi' => [['--tier=isolated'], '--tier=isolated needs php-cgi, which is not in PATH'];
        yield 'fastcgi without address' => [['--tier=fastcgi'], '--tier=fastcgi needs the upstream address'];
        yield 'bad time limit' => [['--time-limit=soon'], "--time-limit must be a number of seconds, got 'soon'"];
        yield 'bad pool size' => [['--pool-size=many'], "--pool-size must be a whole number, got 'many'"];
        yield 'zero pool size' => [['--pool-size=0'], '--pool-size must be between 1 and 1024'];
        yield 'bad php-cgi' => [['--php-cgi=/nonexistent/php-cgi'], '--php-cgi must be an executable file'];
        yield 'ini without value' => [['--php-ini=memory_limit'], "--php-ini must be NAME=VALUE, got 'memory_limit'"];
        yield 'ini without name' => [['--php-ini==1'], '--php-ini must be NAME=VALUE'];
        yield 'bad env name' => [['--pass-env=1X'], '--pass-env must be an environment variable name'];
        yield 'bad address' => [['--fastcgi=nowhere'], "--fastcgi must be HOST:PORT or unix:/path/to.sock, got 'nowhere'"];
        yield 'map without address' => [['--fastcgi-map=.py'], "--fastcgi-map must be EXT=ADDR (.py=127.0.0.1:9001), got '.py'"];
        yield 'map with a bad address' => [['--fastcgi-map=.py=9001'], '--fastcgi-map must be HOST:PORT'];
        yield 'missing cgi-bin' => [['--cgi-bin=no/such/dir'], "--cgi-bin must be an existing directory, got 'no/such/dir'"];
        yield 'bad fork max' => [['--fork-max=0'], '--fork-max must be between 1'];
        yield 'relative front controller' => [['--front-controller=index.php'], '--front-controller must be a URL path'];
        yield 'cache rule without value' => [['--cache-control=/build/'], "--cache-control: A cache rule is PATTERN[,PATTERN...]=CACHE-CONTROL, like '/build/=public, max-age=31536000' or '*.png,*.css=public, max-age=86400', got '/build/'"];
        yield 'cache rule with a bad pattern' => [['--cache-control=build/=no-cache'], "--cache-control: A cache rule's pattern is a path prefix starting with '/' or an extension as '*.EXT', got 'build/'"];
        yield 'cache rule with an empty value' => [['--cache-control=*.png='], "--cache-control: A cache rule's Cache-Control value is empty"];
        yield 'bad trusted proxy' => [['--trusted-proxies=127.0.0.1,localhost'], "--trusted-proxies: Expected an IP address or a CIDR like '10.0.0.0/8' or '2001:db8::/32', got 'localhost'"];
        yield 'bad trusted network' => [['--trusted-proxies=10.0.0.0/33'], "--trusted-proxies: Expected an IP address or a CIDR like '10.0.0.0/8' or '2001:db8::/32', got '10.0.0.0/33'"];
    }

    /** @param list<string> $args */
    #[DataProvider('mistakes')]
    public function testBadSiteOptionsAreUsageErrorsThatSayWhatToDo(array $args, string $message): void
    {
        $this->expectException(UsageException::class);
        $this->expectExceptionMessage($message);
        ServeOptions::parse([self::APP, ...$args], ['PATH' => '/nonexistent'], __DIR__);
    }
}
