<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Http\Static;

use Kiln\Http\Static\CachePolicy;
use Kiln\Http\Static\StaticOptions;
use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;

final class CachePolicyTest extends TestCase
{
    public function testByDefaultNoCacheControlIsSent(): void
    {
        self::assertNull(CachePolicy::none()->for('/build/app.js'));
        self::assertNull((new StaticOptions())->cache->for('/anything.css'));
    }

    public function testTheFirstMatchingRuleWins(): void
    {
        $policy = CachePolicy::none()
            ->withPrefix('/build/', 'public, max-age=31536000, immutable')
            ->withExtensions(['WOFF2', 'png'], 'public, max-age=86400')
            ->withPrefix('/', 'no-cache');
        self::assertSame('public, max-age=31536000, immutable', $policy->for('/build/logo.png'));
        self::assertSame('public, max-age=86400', $policy->for('/img/logo.PNG'));
        self::assertSame('public, max-age=86400', $policy->for('/f.woff2'));
        self::assertSame('no-cache', $policy->for('/index.html'));
        self::assertSame('no-cache', $policy->for('/buildings/x.txt'));
        self::assertSame('public, max-age=86400', $policy->for('/img/', '/srv/www/img/index.png'), 'extension of the file served');
    }

    public function testPoliciesAreImmutable(): void
    {
        $none = CachePolicy::none();
        $none->withPrefix('/', 'no-cache');
        self::assertNull($none->for('/x'));
    }

    public function testARuleInTheCommandLineFormAddsItsPatternsInOrder(): void
    {
        $policy = CachePolicy::none()
            ->withRule('/build/=public, max-age=31536000, immutable')
            ->withRule(' *.woff2 , *.PNG = public, max-age=86400')
            ->withRule('/static/,*.css,/assets/=max-age=60')
            ->withRule('/=no-cache');
        self::assertSame('public, max-age=31536000, immutable', $policy->for('/build/font.woff2'));
        self::assertSame('public, max-age=86400', $policy->for('/fonts/a.woff2'));
        self::assertSame('public, max-age=86400', $policy->for('/img/a.png'), 'extensions match in any case');
        self::assertSame('max-age=60', $policy->for('/static/a.txt'));
        self::assertSame('max-age=60', $policy->for('/x/site.css'));
        self::assertSame('max-age=60', $policy->for('/assets/a.js'));
        self::assertSame('no-cache', $policy->for('/index.html'));
        self::assertNull(CachePolicy::none()->withRule('*.png=max-age=1')->for('/a.jpg'));
        self::assertSame('private="x=y"', CachePolicy::none()->withRule('/=private="x=y"')->for('/a'), 'the value starts after the first =');
    }

    /** @return iterable<string, array{string, string}> */
    public static function badRules(): iterable
    {
        yield 'no equals sign' => ['/build/', 'A cache rule is PATTERN[,PATTERN...]=CACHE-CONTROL'];
        yield 'relative prefix' => ['build/=no-cache', "A cache rule's pattern is a path prefix starting with '/' or an extension as '*.EXT', got 'build/'"];
        yield 'empty pattern' => ['=no-cache', "got '' in '=no-cache'"];
        yield 'empty pattern in a list' => ['/a/,,*.css=no-cache', "got '' in"];
        yield 'bare star' => ['*=no-cache', "got '*'"];
        yield 'no extension' => ['*.=no-cache', "A cache rule's extension is a name without dot or slash"];
        yield 'two dots' => ['*.tar.gz=no-cache', "got 'tar.gz'"];
        yield 'empty value' => ['/build/=', "A cache rule's Cache-Control value is empty"];
        yield 'blank value' => ['*.png=  ', "A cache rule's Cache-Control value is empty"];
        yield 'header injection' => ["/=no-cache\r\nX-Evil: 1", 'Cache-Control'];
    }

    #[DataProvider('badRules')]
    public function testABadRuleIsRefusedWithItsReason(string $rule, string $message): void
    {
        $this->expectException(\ValueError::class);
        $this->expectExceptionMessage($message);
        CachePolicy::none()->withRule($rule);
    }

    public function testBadRulesAreRefusedAtOnce(): void
    {
        foreach ([
            static fn() => CachePolicy::none()->withPrefix('build/', 'no-cache'),
            static fn() => CachePolicy::none()->withPrefix('/', "no-cache\r\nX-Evil: 1"),
            static fn() => CachePolicy::none()->withPrefix('/', ' '),
            static fn() => CachePolicy::none()->withExtensions(['.css'], 'no-cache'),
            static fn() => CachePolicy::none()->withExtensions([], 'no-cache'),
            static fn() => new StaticOptions(index: ['index.php']),
            static fn() => new StaticOptions(index: ['../x.html']),
            static fn() => new StaticOptions(maxRanges: 0),
            static fn() => new StaticOptions(gzipMinSize: 10, gzipMaxSize: 5),
            static fn() => new StaticOptions(gzipLevel: 10),
        ] as $i => $bad) {
            $refused = false;
            try {
                $bad();
            } catch (\ValueError) {
                $refused = true;
            }
            self::assertTrue($refused, "case $i was accepted");
        }
    }
}
