<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Cli;

use Kiln\Tests\Support\HttpClient;
use Kiln\Tests\Support\KilnProcess;
use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;

/**
 * A site written just before `kiln serve` starts (a deploy, then a start) or edited while it runs: the
 * sequential tier includes its scripts on every request, and opcache must keep them compiled. Under the CLI
 * opcache's file_update_protection compares a file's mtime with the start of the process, so without
 * Kiln's setting such a file was compiled again at every request for the worker's life. And an edited or
 * deleted script must be seen within revalidate_freq, as under php-fpm, although opcache under the CLI
 * would never check a cached file again by itself (CodeRevalidation).
 */
final class FreshFilesAreCachedTest extends TestCase
{
    private string $root;

    protected function setUp(): void
    {
        self::assertTrue(\extension_loaded('Zend OPcache'), 'opcache is missing: scripts/install-deps.sh installs php8.2-opcache');
        $this->root = sys_get_temp_dir() . '/kiln-fresh-' . getmypid() . '-' . bin2hex(random_bytes(3));
        mkdir($this->root . '/public', 0755, true);
    }

    protected function tearDown(): void
    {
        foreach (glob($this->root . '/public/*') ?: [] as $file) {
            unlink($file);
        }
        @rmdir($this->root . '/public');
        @rmdir($this->root);
    }

    /** @return iterable<string, array{string}> */
    public static function tiers(): iterable
    {
        yield 'sequential: the worker includes the script' => ['sequential'];
        yield 'fork: a child of the fork server includes it' => ['fork'];
    }

    #[DataProvider('tiers')]
    public function testAScriptWrittenJustBeforeStartAndOneWrittenWhileRunningStayCompiled(string $tier): void
    {
        $script = "<?php\necho opcache_is_script_cached(__FILE__) ? 'cached' : 'compiled again';\n";
        file_put_contents($this->root . '/public/deployed.php', $script);
        $server = KilnProcess::start($this->root, ['--workers=1', "--tier=$tier"]);
        try {
            HttpClient::get($server->baseUrl() . '/deployed.php');
            self::assertSame('cached', HttpClient::get($server->baseUrl() . '/deployed.php')['body']);
            file_put_contents($this->root . '/public/edited.php', $script);
            HttpClient::get($server->baseUrl() . '/edited.php');
            self::assertSame('cached', HttpClient::get($server->baseUrl() . '/edited.php')['body']);
            self::assertStringNotContainsString('file_update_protection', $server->log());
        } finally {
            $server->stop();
        }
    }

    #[DataProvider('tiers')]
    public function testAnEditedScriptRunsItsNewCodeAndADeletedOneAnswers404WithinRevalidateFreq(string $tier): void
    {
        $file = $this->root . '/public/page.php';
        file_put_contents($file, '<?php echo "one";');
        touch($file, time() - 60);
        $server = KilnProcess::start($this->root, ['--workers=1', "--tier=$tier", '--front-controller=none']);
        try {
            $url = $server->baseUrl() . '/page.php';
            for ($i = 0; $i < 3; $i++) {
                self::assertSame('one', HttpClient::get($url)['body']);
            }
            file_put_contents($file, '<?php echo "two";');
            touch($file, time() + 5); // a new modification time, whatever the clock's resolution
            self::assertSame('two', self::waitFor($url, static fn(array $r): bool => $r['body'] === 'two')['body'], $server->log());
            unlink($file);
            self::assertSame(404, self::waitFor($url, static fn(array $r): bool => $r['status'] === 404)['status'], $server->log());
        } finally {
            $server->stop();
        }
    }

    public function testAUserConfiguredOpcacheThatWouldRecompileFreshFilesIsWarnedAboutWhereScriptsRunInTheWorker(): void
    {
        file_put_contents($this->root . '/public/index.php', "<?php\necho 'ok';\n");
        foreach (['sequential' => true, 'isolated' => false] as $tier => $warned) {
            // opcache already on for the CLI: Kiln does not relaunch PHP with its own settings.
            $server = KilnProcess::launch([PHP_BINARY, '-d', 'opcache.enable_cli=1', '-d', 'opcache.file_update_protection=2', \dirname(__DIR__, 3) . '/bin/kiln',
                'serve', $this->root, '--listen=127.0.0.1:0', '--workers=1', "--tier=$tier"]);
            try {
                self::assertSame('ok', HttpClient::get($server->baseUrl() . '/')['body']);
                self::assertSame($warned, str_contains($server->log(), 'opcache.file_update_protection=2: in a long-running worker opcache never caches'), $tier);
            } finally {
                $server->stop();
            }
        }
    }

    /**
     * Requests $url until $done says so, for up to 8 s (revalidate_freq, 2 s by default, plus margin).
     *
     * @param \Closure(array{status: int, headers: array<string, string>, body: string}): bool $done
     * @return array{status: int, headers: array<string, string>, body: string}
     */
    private static function waitFor(string $url, \Closure $done): array
    {
        $deadline = microtime(true) + 8.0;
        do {
            $response = HttpClient::get($url);
            if ($done($response)) {
                return $response;
            }
            usleep(100_000);
        } while (microtime(true) < $deadline);
        return $response;
    }

    public function testAScriptEditedToDeclareNothingStillLetsTheFileItRequiresOnceRunOnEveryRequest(): void
    {
        // config.php declares nothing: require_once runs it on every request, as under php-fpm. page.php first
        // declares a function (so it stays listed as included), then is edited to declare nothing.
        file_put_contents($this->root . '/public/config.php', '<?php $setting = "config ran";');
        $page = $this->root . '/public/page.php';
        $body = 'require_once __DIR__ . "/config.php"; echo $setting ?? "config skipped";';
        file_put_contents($page, '<?php if (!function_exists("kiln_edit_probe")) { function kiln_edit_probe() {} } echo "v1:"; ' . $body);
        touch($page, time() - 60);
        $server = KilnProcess::start($this->root, ['--workers=1', '--tier=sequential', '--front-controller=none']);
        try {
            $url = $server->baseUrl() . '/page.php';
            self::assertSame('v1:config ran', HttpClient::get($url)['body']);
            self::assertSame('v1:config ran', HttpClient::get($url)['body']);
            file_put_contents($page, '<?php echo "v2:"; ' . $body);
            touch($page, time() + 5);
            $deadline = microtime(true) + 10.0;
            do {
                $seen = HttpClient::get($url)['body'];
            } while (!str_starts_with($seen, 'v2:') && microtime(true) < $deadline && usleep(50_000) === null);
            self::assertSame('v2:config ran', $seen, 'the edit was not seen within 10 s');
            for ($i = 0; $i < 3; $i++) {
                self::assertSame('v2:config ran', HttpClient::get($url)['body'], "request $i after the edit");
            }
        } finally {
            $server->stop();
        }
    }
}
