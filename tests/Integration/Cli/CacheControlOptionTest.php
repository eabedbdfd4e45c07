<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Cli;

use Kiln\Tests\Support\HttpClient;
use Kiln\Tests\Support\KilnProcess;
use PHPUnit\Framework\TestCase;

/**
 * `kiln serve DIR --cache-control=PATTERNS=VALUE` on a real socket: the static files of a bare document root
 * get the first matching rule's Cache-Control, the others none; an app's `site(cacheControl: …)` rules come
 * before the command line's; a bad rule stops start-up.
 */
final class CacheControlOptionTest extends TestCase
{
    private const FILES = ['public/build/app.js', 'public/build/logo.png', 'public/fonts/a.woff2', 'public/img/logo.png',
        'public/index.html', 'public/notes.txt', 'public/page.php'];

    private string $root;

    private ?KilnProcess $server = null;

    protected function setUp(): void
    {
        $this->root = sys_get_temp_dir() . '/kiln-cache-control-' . getmypid() . '-' . bin2hex(random_bytes(3));
        foreach (self::FILES as $file) {
            @mkdir(\dirname("$this->root/$file"), 0755, true);
            file_put_contents("$this->root/$file", str_ends_with($file, '.php') ? '<?php echo "script";' : "content of $file\n");
        }
    }

    protected function tearDown(): void
    {
        $this->server?->stop();
        $this->server = null;
        @unlink("$this->root/app.php");
        foreach (self::FILES as $file) {
            @unlink("$this->root/$file");
        }
        foreach (['public/build', 'public/fonts', 'public/img', 'public', ''] as $dir) {
            @rmdir("$this->root/$dir");
        }
    }

    public function testTheFirstMatchingRuleGivesTheHeaderAndOtherFilesGetNone(): void
    {
        $this->server = KilnProcess::start($this->root, ['--workers=1', '--tier=sequential',
            '--cache-control=/build/=public, max-age=31536000, immutable', '--cache-control', '*.woff2,*.png=public, max-age=86400']);
        self::assertSame('public, max-age=31536000, immutable', $this->cacheControl('/build/app.js'));
        self::assertSame('public, max-age=31536000, immutable', $this->cacheControl('/build/logo.png'), 'the first rule wins');
        self::assertSame('public, max-age=86400', $this->cacheControl('/fonts/a.woff2'));
        self::assertSame('public, max-age=86400', $this->cacheControl('/img/logo.png'));
        self::assertNull($this->cacheControl('/notes.txt'));
        self::assertNull($this->cacheControl('/'));
        $script = HttpClient::get($this->server->baseUrl() . '/page.php');
        self::assertSame('script', $script['body']);
        self::assertArrayNotHasKey('cache-control', $script['headers'], 'scripts set their own');
    }

    public function testTheEnvironmentTakesRulesSeparatedBySemicolons(): void
    {
        $this->server = KilnProcess::start(
            $this->root,
            ['--workers=1', '--tier=sequential'],
            ['KILN_CACHE_CONTROL' => '/build/=public, max-age=31536000, immutable; *.txt=no-cache'],
        );
        self::assertSame('public, max-age=31536000, immutable', $this->cacheControl('/build/app.js'));
        self::assertSame('no-cache', $this->cacheControl('/notes.txt'));
        self::assertNull($this->cacheControl('/img/logo.png'));
    }

    public function testAnAppsSiteRulesComeBeforeTheCommandLines(): void
    {
        file_put_contents("$this->root/app.php", <<<'PHP'
            <?php
            $app = new Kiln\App\App();
            $app->get('/route', static fn() => 'route');
            return $app->site(__DIR__ . '/public', tier: 'sequential', cacheControl: ['/build/=no-store', '*.png=max-age=60']);
            PHP);
        $this->server = KilnProcess::start($this->root, ['--workers=1', '--cache-control=/=public, max-age=10']);
        self::assertSame('no-store', $this->cacheControl('/build/logo.png'));
        self::assertSame('max-age=60', $this->cacheControl('/img/logo.png'));
        self::assertSame('public, max-age=10', $this->cacheControl('/notes.txt'), "the command line's rules after site()'s");
    }

    public function testABadRuleStopsStartUpWithItsReason(): void
    {
        [$code, , $stderr] = KilnProcess::run(['serve', $this->root, '--listen=127.0.0.1:0', '--cache-control=build/=no-cache']);
        self::assertSame(2, $code);
        self::assertStringContainsString("kiln: --cache-control: A cache rule's pattern is a path prefix starting with '/' or an extension as '*.EXT', got 'build/'", $stderr);
        [$code, , $stderr] = KilnProcess::run(['serve', $this->root, '--listen=127.0.0.1:0', '--cache-control=*.png'], 10.0);
        self::assertSame(2, $code);
        self::assertStringContainsString('kiln: --cache-control: A cache rule is PATTERN[,PATTERN...]=CACHE-CONTROL', $stderr);
    }

    public function testABadRuleInSiteStopsTheApp(): void
    {
        file_put_contents("$this->root/app.php", <<<'PHP'
            <?php
            $app = new Kiln\App\App();
            return $app->site(__DIR__ . '/public', cacheControl: ['*.png=']);
            PHP);
        $this->expectException(\RuntimeException::class);
        $this->expectExceptionMessageMatches("/site\\(\\) cacheControl: A cache rule's Cache-Control value is empty/");
        $this->server = KilnProcess::start($this->root, ['--workers=1'], [], 5.0);
    }

    private function cacheControl(string $path): ?string
    {
        \assert($this->server !== null);
        $response = HttpClient::get($this->server->baseUrl() . $path);
        self::assertSame(200, $response['status'], $path);
        return $response['headers']['cache-control'] ?? null;
    }
}
