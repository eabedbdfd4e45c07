<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Site\Upstream;

use Kiln\Isolation\FastCgi\FastCgiAddress;
use Kiln\Site\Script;
use Kiln\Site\SiteConfig;
use Kiln\Site\Upstream\FastCgiUpstream;
use Kiln\Site\Upstream\FastCgiUpstreamMap;
use PHPUnit\Framework\TestCase;

final class FastCgiUpstreamMapTest extends TestCase
{
    public function testScriptGoesToTheResponderOfItsExtensionElseToTheDefault(): void
    {
        $map = FastCgiUpstreamMap::fromStrings('127.0.0.1:9000', ['.py' => 'unix:/run/py.sock', 'pl' => '[::1]:9002']);
        self::assertSame('unix:/run/py.sock', (string) $map->addressFor(self::script('/srv/www/app.py')));
        self::assertSame('[::1]:9002', (string) $map->addressFor(self::script('/srv/www/cgi/run.pl')));
        self::assertSame('127.0.0.1:9000', (string) $map->addressFor(self::script('/srv/www/index.php')));
        self::assertSame('127.0.0.1:9000', (string) $map->addressFor(self::script('/srv/www/App.PY')), 'Extensions are case-sensitive');
        self::assertSame('127.0.0.1:9000', (string) $map->addressFor(self::script('/srv/www.py/noext')));
    }

    public function testWithoutDefaultAnUnmappedScriptHasNoResponder(): void
    {
        $map = new FastCgiUpstreamMap(null, ['.py' => FastCgiAddress::parse('127.0.0.1:9001')]);
        self::assertNull($map->addressFor(self::script('/srv/www/index.php')));
        self::assertNotNull($map->addressFor(self::script('/srv/www/a.py')));
    }

    public function testMisconfiguredMapsAreRefused(): void
    {
        foreach ([
            static fn() => new FastCgiUpstreamMap(null),
            static fn() => FastCgiUpstreamMap::fromStrings('127.0.0.1:9000', ['.p/y' => '127.0.0.1:9001']),
            static fn() => FastCgiUpstreamMap::fromStrings('127.0.0.1', []),
            static fn() => FastCgiUpstreamMap::fromStrings(null, ['.py' => 'nowhere']),
        ] as $i => $build) {
            try {
                $build();
                self::fail("case {$i} must be refused");
            } catch (\ValueError) {
                self::addToAssertionCount(1);
            }
        }
    }

    public function testRunnerIsBuiltFromTheSiteConfig(): void
    {
        $config = SiteConfig::create(tier: 'fastcgi', fastcgi: '127.0.0.1:9000', timeLimit: 5.0);
        self::assertInstanceOf(FastCgiUpstream::class, FastCgiUpstream::create((string) $config->fastcgi, $config));
        $this->expectException(\ValueError::class);
        FastCgiUpstream::create('not an address', $config);
    }

    private static function script(string $filename): Script
    {
        return new Script($filename, '/' . \basename($filename), '', '/srv/www');
    }
}
