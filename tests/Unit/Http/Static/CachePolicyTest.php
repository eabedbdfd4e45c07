<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Http\Static;

use Kiln\Http\Static\CachePolicy;
use Kiln\Http\Static\StaticOptions;
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
