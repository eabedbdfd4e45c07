<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Sequential;

use Kiln\Tests\Support\HttpClient;
use Kiln\Tests\Support\KilnProcess;
use Kiln\Tests\Support\PeerProcess;
use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;

/**
 * The usual layout with `public/` as the document root and code beside it: an edit to `../inc.php` is
 * running within opcache's revalidate_freq (2 s here, the default), as an edit inside the root is, on the
 * tiers whose scripts opcache keeps in a long-running process.
 */
final class EditsOutsideTheRootTest extends TestCase
{
    /** @return iterable<string, array{string}> */
    public static function tiers(): iterable
    {
        yield 'sequential' => ['sequential'];
        yield 'fork' => ['fork'];
    }

    #[DataProvider('tiers')]
    public function testAnEditToAFileIncludedFromAboveTheRootIsSeenWithinTheRevalidationWindow(string $tier): void
    {
        $this->assertEditSeen($tier, '');
    }

    /**
     * A script that registers a shutdown function ends its worker with its request (docs/tiers.md), so no
     * worker lives for revalidate_freq seconds: the check must not wait for a worker's own clock.
     */
    public function testAnEditIsSeenWhenEveryRequestReplacesItsWorker(): void
    {
        $this->assertEditSeen('sequential', 'register_shutdown_function(static function (): void {});');
    }

    private function assertEditSeen(string $tier, string $pageCode): void
    {
        self::assertTrue(\extension_loaded('Zend OPcache'), 'opcache is missing: scripts/install-deps.sh installs php8.2-opcache');
        $root = PeerProcess::tempDir('kiln-outside-root');
        $server = null;
        try {
            mkdir("$root/public");
            file_put_contents("$root/inc.php", '<?php return "one";');
            touch("$root/inc.php", time() - 60);
            file_put_contents("$root/public/page.php", '<?php ' . $pageCode . ' echo require __DIR__ . "/../inc.php", "|", opcache_is_script_cached(\dirname(__DIR__) . "/inc.php") ? "cached" : "not cached";');
            touch("$root/public/page.php", time() - 60);
            $server = KilnProcess::start($root, ['--workers=1', "--tier=$tier", '--front-controller=none']);
            $url = $server->baseUrl() . '/page.php';
            HttpClient::get($url, [], 10.0);
            self::assertSame('one|cached', HttpClient::get($url, [], 10.0)['body'], 'opcache keeps the file outside the root');
            file_put_contents("$root/inc.php", '<?php return "two";');
            touch("$root/inc.php", time() + 5); // a new modification time, whatever the clock's resolution
            $edited = microtime(true);
            $deadline = $edited + 8.0; // revalidate_freq (2 s) with a wide margin for a loaded machine
            do {
                $body = HttpClient::get($url, [], 10.0)['body'];
                if (str_starts_with($body, 'two|')) {
                    break;
                }
                usleep(100_000);
            } while (microtime(true) < $deadline);
            self::assertSame('two|cached', $body, 'the edit of ../inc.php was not seen within 8 s: ' . $server->log());
        } finally {
            $server?->stop();
            PeerProcess::removeDir($root);
        }
    }
}
