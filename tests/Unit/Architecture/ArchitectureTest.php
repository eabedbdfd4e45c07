<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Architecture;

use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;

/** The layers of docs/internals.md hold in src/, and the check behind that finds what it should. */
final class ArchitectureTest extends TestCase
{
    private string $root = '';

    protected function tearDown(): void
    {
        if ($this->root !== '') {
            foreach (new \RecursiveIteratorIterator(new \RecursiveDirectoryIterator($this->root, \FilesystemIterator::SKIP_DOTS), \RecursiveIteratorIterator::CHILD_FIRST) as $entry) {
                \assert($entry instanceof \SplFileInfo);
                $entry->isDir() ? rmdir($entry->getPathname()) : unlink($entry->getPathname());
            }
            rmdir($this->root);
        }
    }

    public function testNoLayerOfSrcUsesALayerAboveItOrAnotherLayersInternals(): void
    {
        self::assertSame([], LayerRules::violations(\dirname(__DIR__, 3) . '/src'));
    }

    /** @return iterable<string, array{string, string, list<string>}> file under a planted src/, its code, what is found */
    public static function plantedCode(): iterable
    {
        yield 'Site using App' => ['Site/Thing.php', "<?php\nnamespace Kiln\\Site;\nuse Kiln\\App\\Middleware\\TrustedProxies;\n",
            ['Site/Thing.php: Kiln\App\Middleware\TrustedProxies (Site may not use App: it is not below Site)']];
        yield 'Loop naming Http in code' => ['Loop/Thing.php', "<?php\nnamespace Kiln\\Loop;\nfunction f(): void { new \\Kiln\\Http\\Response(); }\n",
            ['Loop/Thing.php: Kiln\Http\Response (Loop may not use Http: it is not below Loop)']];
        yield 'Http and Isolation are siblings' => ['Http/Thing.php', "<?php\nnamespace Kiln\\Http;\nuse Kiln\\Isolation\\FastCgi\\Record;\n",
            ['Http/Thing.php: Kiln\Isolation\FastCgi\Record (Http may not use Isolation: it is not below Http)']];
        yield 'Store using Http' => ['Store/Thing.php', "<?php\nnamespace Kiln\\Store;\nuse function Kiln\\Http\\helper;\n",
            ['Store/Thing.php: Kiln\Http\helper (Store may not use Http: it is not below Store)']];
        yield 'Db using Store' => ['Db/Thing.php', "<?php\nnamespace Kiln\\Db;\nuse Kiln\\Store\\Store;\n",
            ['Db/Thing.php: Kiln\Store\Store (Db may not use Store: it is not below Db)']];
        yield 'Server using Db' => ['Server/Thing.php', "<?php\nnamespace Kiln\\Server;\nuse Kiln\\Db\\Pool;\n",
            ['Server/Thing.php: Kiln\Db\Pool (Server may not use Db: it is not below Server)']];
        yield 'App using Db' => ['App/Thing.php', "<?php\nnamespace Kiln\\App;\nuse Kiln\\Db\\Pool;\n", []];
        yield 'a group use' => ['Server/Thing.php', "<?php\nnamespace Kiln\\Server;\nuse Kiln\\Site\\{Script, Tier};\n",
            ['Server/Thing.php: Kiln\Site (Server may not use Site: it is not below Server)']];
        yield "another layer's Internal" => ['Site/Thing.php', "<?php\nnamespace Kiln\\Site;\nuse Kiln\\Http\\Internal\\HttpCore;\n",
            ["Site/Thing.php: Kiln\\Http\\Internal\\HttpCore (Http's Internal is for Http alone)"]];
        yield 'Redis using Store' => ['Redis/Thing.php', "<?php\nnamespace Kiln\\Redis;\nuse Kiln\\Store\\SharedState;\n",
            ['Redis/Thing.php: Kiln\Store\SharedState (Redis may not use Store: it is not below Redis)']];
        yield 'Redis using Server' => ['Redis/Thing.php', "<?php\nnamespace Kiln\\Redis;\nuse Kiln\\Server\\Backoff;\n",
            ['Redis/Thing.php: Kiln\Server\Backoff (Redis may not use Server: it is not below Redis)']];
        yield 'Store using Redis' => ['Store/Thing.php', "<?php\nnamespace Kiln\\Store;\nuse Kiln\\Redis\\RedisClient;\n", []];
        yield 'an unknown layer' => ['Extra/Thing.php', "<?php\nnamespace Kiln\\Extra;\n",
            ['Extra/Thing.php: src/Extra is no known layer (add it to the layer order)']];
        yield 'a layer below' => ['App/Thing.php', "<?php\nnamespace Kiln\\App;\nuse Kiln\\Http\\Request;\nuse Kiln\\Loop\\Loop;\nuse Kiln\\Kiln;\n", []];
        yield "its own layer's Internal" => ['Http/Static/Thing.php', "<?php\nnamespace Kiln\\Http\\Static;\nuse Kiln\\Http\\Internal\\HttpCore;\n", []];
        yield 'names in strings and docblocks' => ['Loop/Thing.php', "<?php\nnamespace Kiln\\Loop;\n/** @see \\Kiln\\App\\App */\nconst C = 'Kiln\\\\App\\\\App';\n", []];
    }

    /** @param list<string> $expected */
    #[DataProvider('plantedCode')]
    public function testTheCheckFindsWhatIsPlanted(string $path, string $code, array $expected): void
    {
        $this->root = sys_get_temp_dir() . '/kiln-layers-' . getmypid() . '-' . bin2hex(random_bytes(4));
        mkdir(\dirname("$this->root/$path"), 0o777, true);
        file_put_contents("$this->root/$path", $code);
        self::assertSame($expected, LayerRules::violations($this->root));
    }
}
