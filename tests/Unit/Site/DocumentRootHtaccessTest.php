<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Site;

use Kiln\Http\Request;
use Kiln\Http\Response;
use Kiln\Http\StaticFiles;
use Kiln\Site\DocumentRoot;
use Kiln\Site\Htaccess\HtaccessRules;
use Kiln\Site\Htaccess\LocalFilesystem;
use Kiln\Site\PathResolver;
use Kiln\Site\Script;
use Kiln\Site\ScriptRunner;
use Kiln\Site\SiteConfig;
use Kiln\Site\TierMap;
use Kiln\Tests\Support\PeerProcess;
use Kiln\Tests\Support\ResponseBody;
use Kiln\Tests\Unit\App\Middleware\Requests;
use PHPUnit\Framework\TestCase;

/** The document root with .htaccess files, on a real directory, with a runner that records the Script it gets. */
final class DocumentRootHtaccessTest extends TestCase
{
    private string $root = '';

    private float $now = 1_000_000.0;

    /** @var list<string> */
    private array $logged = [];

    /** @var list<Script> */
    private array $ran = [];

    protected function setUp(): void
    {
        $this->root = PeerProcess::tempDir('kiln-docroot-htaccess');
        $this->write([
            'index.php' => '<?php',
            'page.php' => '<?php',
            'readme.txt' => "readme\n",
            'blog/index.php' => '<?php',
            'blog/post.php' => '<?php',
            'blog/home.html' => "<h1>home</h1>\n",
            'dl/file.bin' => "bytes\n",
            '404.html' => "<h1>lost</h1>\n",
        ]);
    }

    protected function tearDown(): void
    {
        PeerProcess::removeDir($this->root);
    }

    public function testWithoutAnyHtaccessFileRequestsAreServedAsBefore(): void
    {
        $site = $this->site();
        self::assertSame(200, $site->handle(Requests::make('GET', '/readme.txt'))->status());
        self::assertSame(200, $site->handle(Requests::make('GET', '/page?x=1'))->status());
        self::assertSame('/page.php', $this->ran[0]->scriptName);
        self::assertNull($this->ran[0]->queryString);
        self::assertSame([], $this->ran[0]->env);
        self::assertSame(404, $site->handle(Requests::make('GET', '/missing.txt'))->status(), 'front controller off in this site');
    }

    public function testARewriteGivesTheScriptItsQueryVariablesAndPhpIni(): void
    {
        $this->write(['.htaccess' => "RewriteEngine On\nRewriteRule ^item/(\\d+)$ index.php?id=$1 [QSA,E=FOO:bar]\n"
            . "SetEnv SITE kiln\nphp_value memory_limit 64M\n"]);
        $response = $this->site()->handle(Requests::make('GET', '/item/3?x=1'));
        self::assertSame(200, $response->status());
        $script = $this->ran[0];
        self::assertSame('/index.php', $script->scriptName);
        self::assertSame('id=3&x=1', $script->queryString);
        self::assertSame('bar', $script->env['REDIRECT_FOO'] ?? null, 'E= before the internal rewrite becomes REDIRECT_FOO');
        self::assertSame('kiln', $script->env['SITE'] ?? null);
        self::assertSame('/item/3', $script->env['REDIRECT_URL'] ?? null);
        self::assertSame(['memory_limit' => '64M'], $script->phpIni);
    }

    public function testDirectoryIndexChoosesTheIndexAndDisabledRefuses(): void
    {
        $this->write(['blog/.htaccess' => "DirectoryIndex home.html index.php\n"]);
        $site = $this->site();
        self::assertSame("<h1>home</h1>\n", self::body($site->handle(Requests::make('GET', '/blog/'))));
        $this->write(['blog/.htaccess' => "DirectoryIndex disabled\n"]);
        $this->now += 2;
        self::assertSame(403, $site->handle(Requests::make('GET', '/blog/'))->status());
    }

    public function testTheFileFinallyServedIsCheckedAgainstItsOwnRules(): void
    {
        $this->write(['blog/.htaccess' => "<Files index.php>\nRequire all denied\n</Files>\n"]);
        $site = $this->site();
        self::assertSame(403, $site->handle(Requests::make('GET', '/blog/'))->status(), 'the index file is denied');
        self::assertSame(200, $site->handle(Requests::make('GET', '/blog/post'))->status());
        self::assertSame(['/blog/post.php'], array_map(static fn(Script $s): string => $s->scriptName, $this->ran));
    }

    public function testTheFrontControllerInADeniedDirectoryIsRefusedEvenFromAPathWithoutHtaccess(): void
    {
        $this->write(['blog/.htaccess' => "Require all denied\n"]);
        $site = $this->site('/blog/index.php');
        self::assertSame(403, $site->handle(Requests::make('GET', '/nowhere'))->status());
        self::assertSame([], $this->ran);
    }

    public function testHeadersTypesAndExpiryApplyToStaticFilesAndOnlyAlwaysHeadersToErrors(): void
    {
        $this->write(['dl/.htaccess' => "Header set X-A one\nHeader always set X-B two\nAddType application/x-kiln .bin\n"
            . "ExpiresActive On\nExpiresDefault \"access plus 1 hour\"\n"]);
        $site = $this->site();
        $file = $site->handle(Requests::make('GET', '/dl/file.bin'));
        self::assertSame(['one', 'two', 'application/x-kiln'], [$file->header('x-a'), $file->header('x-b'), $file->header('content-type')]);
        self::assertSame('max-age=3600', $file->header('cache-control'));
        $missing = $site->handle(Requests::make('GET', '/dl/missing.bin'));
        self::assertSame(404, $missing->status());
        self::assertSame([null, 'two'], [$missing->header('x-a'), $missing->header('x-b')]);
        self::assertFalse($missing->hasHeader('expires'));
    }

    public function testARedirectRuleAnswersWithItsStatusAndLocation(): void
    {
        $this->write(['.htaccess' => "RewriteEngine On\nRewriteRule ^old$ /new [R=301,L]\n"]);
        $response = $this->site()->handle(Requests::make('GET', '/old?a=1', ['Host' => 'example.test']));
        self::assertSame(301, $response->status());
        self::assertSame('http://example.test/new?a=1', $response->header('location'));
    }

    public function testErrorDocumentsAreAPageKeepingTheStatusAUrlOrText(): void
    {
        $this->write(['.htaccess' => "ErrorDocument 404 /404.html\nErrorDocument 403 https://example.test/denied\n",
            'blog/.htaccess' => "ErrorDocument 404 \"Nothing here\n"]);
        $site = $this->site();
        $page = $site->handle(Requests::make('GET', '/missing.txt'));
        self::assertSame([404, "<h1>lost</h1>\n"], [$page->status(), self::body($page)]);
        $url = $site->handle(Requests::make('GET', '/dl/'));
        self::assertSame([302, 'https://example.test/denied'], [$url->status(), $url->header('location')]);
        $text = $site->handle(Requests::make('GET', '/blog/missing.txt'));
        self::assertSame([404, 'Nothing here'], [$text->status(), self::body($text)]);
    }

    public function testAScriptErrorDocumentGetsTheStatusAndTheUrlThatFailed(): void
    {
        $this->write(['.htaccess' => "ErrorDocument 404 /page.php\n"]);
        $response = $this->site()->handle(Requests::make('GET', '/gone.txt?q=1'));
        self::assertSame(404, $response->status());
        $env = $this->ran[0]->env;
        self::assertSame(['404', '/gone.txt', 'q=1'], [$env['REDIRECT_STATUS'], $env['REDIRECT_URL'], $env['REDIRECT_QUERY_STRING']]);
    }

    public function testAMissingErrorDocumentFallsBackToKilnsOwnAnswer(): void
    {
        $this->write(['.htaccess' => "ErrorDocument 404 /nope.html\n"]);
        $response = $this->site()->handle(Requests::make('GET', '/gone.txt'));
        self::assertSame([404, "404 Not Found\n"], [$response->status(), self::body($response)]);
    }

    public function testWarningsAreLoggedOncePerParseOfTheFile(): void
    {
        $this->write(['blog/.htaccess' => "AddHandler cgi-script .cgi\n"]);
        $site = $this->site();
        for ($i = 0; $i < 3; $i++) {
            $site->handle(Requests::make('GET', '/blog/post'));
            $this->now += 0.6;
        }
        self::assertCount(1, $this->logged);
        self::assertStringContainsString('/blog/.htaccess:1: AddHandler: ', $this->logged[0]);
        $this->write(['blog/.htaccess' => "\nAddHandler cgi-script .cgi .pl\n"]);
        $this->now += 2;
        $site->handle(Requests::make('GET', '/blog/post'));
        self::assertCount(2, $this->logged, 'parsed again after the change');
    }

    public function testAnHtaccessFileCreatedLaterIsSeenAfterTheRecheckInterval(): void
    {
        $site = $this->site();
        self::assertSame(200, $site->handle(Requests::make('GET', '/dl/file.bin'))->status());
        $this->write(['dl/.htaccess' => "Require all denied\n"]);
        $this->now += 0.5;
        self::assertSame(200, $site->handle(Requests::make('GET', '/dl/file.bin'))->status(), 'cached for up to a second');
        $this->now += 0.6;
        self::assertSame(403, $site->handle(Requests::make('GET', '/dl/file.bin'))->status());
    }

    public function testPhpValueIsReportedOnceForATierThatCannotApplyIt(): void
    {
        $this->write(['.htaccess' => "php_value memory_limit 64M\nphp_flag display_errors off\n"]);
        $site = $this->site(ignorePhpIni: 'fork');
        $site->handle(Requests::make('GET', '/page'));
        $site->handle(Requests::make('GET', '/index.php'));
        self::assertCount(2, $this->logged, implode("\n", $this->logged));
        self::assertStringContainsString('php_value memory_limit (/page.php): not applied by the fork tier', $this->logged[0]);
        self::assertSame(['memory_limit' => '64M', 'display_errors' => '0'], $this->ran[1]->phpIni, 'still given to the runner');
    }

    public function testPhpValueThatPhpIniAlreadyGivesIsNotReported(): void
    {
        $this->write(['.htaccess' => "php_value memory_limit 64M\nphp_value post_max_size 16M\n"]);
        $site = $this->site(ignorePhpIni: 'isolated', phpIni: ['post_max_size' => '16M', 'memory_limit' => '128M']);
        $site->handle(Requests::make('GET', '/page'));
        self::assertCount(1, $this->logged, implode("\n", $this->logged));
        self::assertStringContainsString('php_value memory_limit (/page.php): not applied by the isolated tier', $this->logged[0], 'another value than --php-ini\'s');
    }

    public function testTheSiteBuildsItsRulesUnlessTurnedOff(): void
    {
        $this->write(['.htaccess' => "Require all denied\n"]);
        $on = DocumentRoot::forSite($this->root, SiteConfig::create(tier: 'sequential', searchPath: ''));
        self::assertSame(403, $on->handle(Requests::make('GET', '/readme.txt'))->status());
        $off = DocumentRoot::forSite($this->root, SiteConfig::create(tier: 'sequential', searchPath: '', htaccess: false));
        self::assertSame(200, $off->handle(Requests::make('GET', '/readme.txt'))->status());
    }

    /** @param array<string, string> $phpIni */
    private function site(?string $frontController = null, ?string $ignorePhpIni = null, array $phpIni = []): DocumentRoot
    {
        $runner = new class (function (Script $script): void {
            $this->ran[] = $script;
        }) implements ScriptRunner {
            /** @param \Closure(Script): void $record */
            public function __construct(private readonly \Closure $record) {}

            public function run(Request $request, Script $script): Response
            {
                ($this->record)($script);
                return Response::text($script->scriptName);
            }
        };
        $rules = new HtaccessRules($this->root, new LocalFilesystem(), fn(): float => $this->now);
        $log = function (string $level, string $message): void {
            $this->logged[] = "$level $message";
        };
        $ignores = static fn(ScriptRunner $runner): ?string => $ignorePhpIni;
        return new DocumentRoot(new PathResolver($this->root, $frontController), new TierMap($runner), new StaticFiles($this->root), $rules, $log, $ignores, phpIni: $phpIni);
    }

    /** @param array<string, string> $files */
    private function write(array $files): void
    {
        foreach ($files as $path => $contents) {
            @mkdir(\dirname("$this->root/$path"), 0o755, true);
            file_put_contents("$this->root/$path", $contents);
        }
    }

    private static function body(Response $response): string
    {
        return ResponseBody::of($response);
    }
}
