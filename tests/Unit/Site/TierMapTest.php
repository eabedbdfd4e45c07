<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Site;

use Kiln\Http\Request;
use Kiln\Http\Response;
use Kiln\Site\Script;
use Kiln\Site\ScriptRunner;
use Kiln\Site\TierMap;
use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;

final class TierMapTest extends TestCase
{
    /** @return iterable<string, array{string, string}> */
    public static function scripts(): iterable
    {
        yield 'no prefix matches' => ['/index.php', 'default'];
        yield 'under a prefix given with its slash' => ['/wp-admin/x.php', 'isolated'];
        yield 'deeper under it' => ['/wp-admin/network/y.php', 'isolated'];
        yield 'the longest prefix wins' => ['/wp-admin/slow/z.php', 'fork'];
        yield 'a prefix given without its slash' => ['/legacy/a.php', 'cgi'];
        yield 'a prefix is a whole segment' => ['/wp-adminx.php', 'default'];
        yield 'a prefix without slash is a whole segment' => ['/legacy2.php', 'default'];
        yield 'a prefix naming a file' => ['/xmlrpc.php', 'fork'];
        yield 'the extension map comes first' => ['/wp-admin/tool.py', 'python'];
        yield 'an extension is the last dot of the name' => ['/app.py/x.php', 'default'];
        yield 'extensions are case-sensitive' => ['/tool.PY', 'default'];
        yield 'a tree comes before the extensions' => ['/cgi-bin/tool.py', 'cgi-bin'];
        yield 'a tree takes any name' => ['/cgi-bin/sub/run', 'cgi-bin'];
        yield 'a tree is a whole segment too' => ['/cgi-binary.py', 'python'];
    }

    #[DataProvider('scripts')]
    public function testTheRunnerIsChosenByExtensionThenLongestPrefix(string $scriptName, string $expected): void
    {
        $map = (new TierMap(self::runner('default'), ['/wp-admin/' => self::runner('isolated'), '/legacy' => self::runner('cgi')]))
            ->withPrefix('/wp-admin/slow', self::runner('fork'))
            ->withPrefix('/xmlrpc.php', self::runner('fork'))
            ->withExtension('.py', self::runner('python'))
            ->withTree('/cgi-bin', self::runner('cgi-bin'));
        self::assertSame($expected, self::nameOf($map->runnerFor($scriptName)));
    }

    public function testTheRootPrefixReplacesTheDefault(): void
    {
        $map = new TierMap(self::runner('default'), ['/' => self::runner('root')]);
        self::assertSame('root', self::nameOf($map->runnerFor('/x.php')));
        self::assertSame('default', self::nameOf($map->defaultRunner()));
    }

    public function testWithPrefixLeavesTheOriginalAlone(): void
    {
        $map = new TierMap(self::runner('default'));
        $map->withPrefix('/a', self::runner('a'));
        self::assertSame('default', self::nameOf($map->runnerFor('/a/x.php')));
    }

    public function testARelativePrefixIsRefused(): void
    {
        $this->expectException(\ValueError::class);
        $this->expectExceptionMessage('must start with /');
        new TierMap(self::runner('default'), ['wp-admin/' => self::runner('x')]);
    }

    public function testAnExtensionWithoutItsDotIsRefused(): void
    {
        $this->expectException(\ValueError::class);
        (new TierMap(self::runner('default')))->withExtension('py', self::runner('x'));
    }

    private static function runner(string $name): ScriptRunner
    {
        return new class ($name) implements ScriptRunner {
            public function __construct(public readonly string $name) {}

            public function run(Request $request, Script $script): Response
            {
                return Response::text($this->name);
            }
        };
    }

    private static function nameOf(ScriptRunner $runner): string
    {
        \assert(property_exists($runner, 'name') && \is_string($runner->name));
        return $runner->name;
    }
}
