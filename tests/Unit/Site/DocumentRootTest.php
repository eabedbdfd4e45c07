<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Site;

use Kiln\Http\Request;
use Kiln\Http\Response;
use Kiln\Http\StaticFiles;
use Kiln\Site\DocumentRoot;
use Kiln\Site\PathResolver;
use Kiln\Site\RunnerFactory;
use Kiln\Site\Script;
use Kiln\Site\ScriptRunner;
use Kiln\Site\SiteConfig;
use Kiln\Site\Tier;
use Kiln\Site\TierMap;
use Kiln\Tests\Support\ResponseBody;
use Kiln\Tests\Unit\App\Middleware\Requests;
use PHPUnit\Framework\TestCase;

final class DocumentRootTest extends TestCase
{
    private static string $base = '';

    /** @var list<string> what the document root logged, "level: message" */
    private array $logged = [];

    public static function setUpBeforeClass(): void
    {
        self::$base = SiteTree::create();
    }

    public static function tearDownAfterClass(): void
    {
        SiteTree::remove(self::$base);
    }

    public function testScriptsGoToTheRunnerOfTheirPrefix(): void
    {
        $root = $this->root(['/blog/' => 'blog-runner']);
        $response = $root->handle(Requests::make('POST', '/blog/post/2024?x=1'));
        self::assertSame('blog-runner /blog/post.php /2024 ' . self::$base . '/root/blog/post.php', $response->body());
        self::assertSame('default /index.php  ' . self::$base . '/root/index.php', $root->handle(Requests::make('GET', '/nothing/here'))->body());
    }

    public function testStaticFilesAreSentWithTheirType(): void
    {
        $response = $this->root()->handle(Requests::make('GET', '/style.css'));
        self::assertSame(200, $response->status());
        self::assertStringStartsWith('text/css', (string) $response->header('content-type'));
        self::assertSame("body { color: red }\n", self::body($response));
    }

    public function testADirectoryWithoutItsSlashIsRedirectedWithItsQuery(): void
    {
        $response = $this->root()->handle(Requests::make('GET', '/docs?a=1'));
        self::assertSame(301, $response->status());
        self::assertSame('/docs/?a=1', $response->header('location'));
        self::assertSame("301 Moved Permanently: /docs/?a=1\n", $response->body());
    }

    public function testRefusalsAreShortAndSayNothingOfWhy(): void
    {
        $root = $this->root();
        foreach (['/.env' => 404, '/config.inc' => 403, '/a%2fb' => 400, '/link-out.txt' => 404] as $path => $status) {
            $response = $root->handle(Requests::make('GET', $path));
            self::assertSame($status, $response->status(), $path);
            self::assertMatchesRegularExpression('/^\d{3} [A-Za-z ]+\n$/', self::body($response), $path);
            self::assertStringStartsWith('text/plain', (string) $response->header('content-type'));
        }
        // The client is told nothing; the log says why the link was refused and what would serve it.
        self::assertCount(1, $this->logged, implode("\n", $this->logged));
        self::assertMatchesRegularExpression('~^warning: /link-out\.txt: 404, not served: symlink .*/root/link-out\.txt leads out of the document root to .*/secret\.txt \(--symlinks=inside~', $this->logged[0]);
    }

    public function testRunnersAreBuiltOnFirstUseNotWithTheMap(): void
    {
        $factory = new RunnerFactory(SiteConfig::create(tier: 'sequential', cgiBin: self::$base . '/cgi', fastcgiMap: ['.py' => '127.0.0.1:1'], searchPath: ''));
        $map = $factory->tierMap();
        self::assertNotSame($map->runnerFor('/x.php'), $map->runnerFor('/cgi-bin/x'));
        self::assertNotSame($map->runnerFor('/x.php'), $map->runnerFor('/x.py'));
        self::assertSame($map->runnerFor('/x.php'), $map->runnerFor('/wp-admin/y.php'));
        self::assertSame($map->runnerFor('/cgi-bin/x'), $map->runnerFor('/cgi-bin/x.py'), 'cgi-bin runs its .py files itself');
    }

    public function testTheFastCgiTierNeedsAnAddress(): void
    {
        $this->expectException(\Error::class);
        $this->expectExceptionMessage('needs an upstream address');
        (new RunnerFactory(SiteConfig::create(tier: 'sequential', searchPath: '')))->create(Tier::FastCgi);
    }

    /** @param array<string, string> $prefixes */
    private function root(array $prefixes = []): DocumentRoot
    {
        $runners = [];
        foreach ($prefixes as $prefix => $name) {
            $runners[$prefix] = self::runner($name);
        }
        $root = self::$base . '/root';
        return new DocumentRoot(new PathResolver($root), new TierMap(self::runner('default'), $runners), new StaticFiles($root), log: function (string $level, string $message): void {
            $this->logged[] = "$level: $message";
        });
    }

    private static function runner(string $name): ScriptRunner
    {
        return new class ($name) implements ScriptRunner {
            public function __construct(private readonly string $name) {}

            public function run(Request $request, Script $script): Response
            {
                return Response::text("{$this->name} {$script->scriptName} {$script->pathInfo} {$script->filename}");
            }
        };
    }

    private static function body(Response $response): string
    {
        return ResponseBody::of($response);
    }
}
