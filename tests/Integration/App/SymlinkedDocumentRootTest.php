<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\App;

use Kiln\Tests\Support\HttpClient;
use Kiln\Tests\Support\KilnProcess;
use Kiln\Tests\Support\PeerProcess;
use Kiln\Tests\Support\PhpFpmProcess;
use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;

/**
 * A document root laid out as Debian lays out packaged apps: /var/lib/APP whose entries are links into
 * /usr/share/APP, a plugin folder linked from a third tree, and a local file of its own. Served with
 * --symlinks=owner, on every tier, with the script run as requested (SCRIPT_FILENAME and working directory
 * are the link's, so `require './local.php'` finds the file beside the link); a link Kiln refuses (by
 * default every link out of the root) is logged with its reason.
 */
final class SymlinkedDocumentRootTest extends TestCase
{
    /** @return iterable<string, array{string}> */
    public static function tiers(): iterable
    {
        yield 'sequential' => ['sequential'];
        yield 'fork' => ['fork'];
        yield 'isolated' => ['isolated'];
        yield 'fastcgi (php-fpm)' => ['fastcgi'];
    }

    #[DataProvider('tiers')]
    public function testADocumentRootOfLinksIntoAnotherTreeIsServedWithScriptsRunAsRequested(string $tier): void
    {
        $base = PeerProcess::tempDir('kiln-linked-root');
        $server = null;
        $fpm = null;
        try {
            $root = self::layout($base);
            $args = ['--workers=1', '--pool-size=1', "--tier=$tier", '--symlinks=owner'];
            if ($tier === 'fastcgi') {
                self::assertTrue(is_executable(PhpFpmProcess::BINARY), 'php-fpm8.2 is missing: scripts/install-deps.sh dev installs it');
                $fpm = PhpFpmProcess::start(children: 1);
                $args[] = '--fastcgi=' . $fpm->address();
            }
            $server = KilnProcess::start($root, $args);
            $url = $server->baseUrl();
            $page = HttpClient::get("$url/page.php", [], 10.0);
            self::assertSame(200, $page['status'], $page['body'] . $server->log());
            self::assertSame(['file' => "$root/page.php", 'cwd' => $root, 'local' => 'local ok', 'name' => '/page.php'], json_decode($page['body'], true));
            self::assertSame([200, 'shared index'], self::statusAndBody(HttpClient::get("$url/", [], 10.0)), 'the index through a link');
            self::assertSame([200, "body{}\n"], self::statusAndBody(HttpClient::get("$url/style.css", [], 10.0)), 'a static file through a link');
            self::assertSame([200, "inner as $root/sub/inner.php"], self::statusAndBody(HttpClient::get("$url/sub/inner.php", [], 10.0)), 'a linked folder');
            self::assertSame([200, 'plugin'], self::statusAndBody(HttpClient::get("$url/plugins/hello/plugin.php", [], 10.0)), 'a plugin linked from a third tree');
            $other = HttpClient::get("$url/other-owner.txt", [], 10.0);
            self::assertSame(404, $other['status'], 'a link to a file of another owner');
            $server->waitForLog('~/other-owner\.txt: 404, not served: symlink \S+/other-owner\.txt \(owner uid \d+\) points to .* --symlinks=owner~', 5.0);
        } finally {
            $server?->stop();
            $fpm?->stop();
            PeerProcess::removeDir($base);
        }
    }

    public function testByDefaultALinkOutOfTheRootIsRefusedAndTheLogSaysWhyAndWhatWouldServeIt(): void
    {
        $base = PeerProcess::tempDir('kiln-linked-root');
        $server = null;
        try {
            $root = self::layout($base);
            $server = KilnProcess::start($root, ['--workers=1', '--tier=sequential']);
            // Said once at start-up too, before any request meets a 404.
            self::assertMatchesRegularExpression('~\[warning\].* of the document root\'s entries are links out of it that --symlinks=inside refuses \(.*page\.php.*\): each answers 404; --symlinks=owner~', $server->log());
            self::assertSame(404, HttpClient::get($server->baseUrl() . '/page.php', [], 10.0)['status']);
            $server->waitForLog('~/page\.php: 404, not served: symlink \S+/page\.php leads out of the document root to \S+/share/app/page\.php \(--symlinks=inside, the default; --symlinks=owner or follow would serve it\)~', 5.0);
            self::assertSame([200, 'local ok'], self::statusAndBody(HttpClient::get($server->baseUrl() . '/local.php', [], 10.0)));
        } finally {
            $server?->stop();
            PeerProcess::removeDir($base);
        }
    }

    /** Builds share/app (the package's files), plugins/ (a third tree) and lib/app (the document root); returns the root. */
    private static function layout(string $base): string
    {
        foreach (['share/app/sub', 'plugins/hello', 'lib/app'] as $dir) {
            mkdir("$base/$dir", 0o755, true);
        }
        $share = "$base/share/app";
        file_put_contents("$share/index.php", '<?php echo "shared index";');
        file_put_contents("$share/page.php", '<?php require "./local.php"; echo json_encode(["file" => $_SERVER["SCRIPT_FILENAME"], "cwd" => getcwd(), "local" => $local, "name" => $_SERVER["SCRIPT_NAME"]]);');
        file_put_contents("$share/style.css", "body{}\n");
        file_put_contents("$share/sub/inner.php", '<?php echo "inner as ", $_SERVER["SCRIPT_FILENAME"];');
        file_put_contents("$base/plugins/hello/plugin.php", '<?php echo "plugin";');
        $root = "$base/lib/app";
        foreach (['index.php', 'page.php', 'style.css', 'sub'] as $entry) {
            symlink("$share/$entry", "$root/$entry");
        }
        symlink("$base/plugins", "$root/plugins");
        file_put_contents("$root/local.php", '<?php $local = "local ok"; if (basename($_SERVER["SCRIPT_NAME"]) === "local.php") { echo $local; }');
        // A link whose owner is not its target's: refused by --symlinks=owner.
        file_put_contents("$base/secret.txt", "secret\n");
        symlink("$base/secret.txt", "$root/other-owner.txt");
        if (posix_getuid() === 0) {
            self::assertTrue(lchown("$root/other-owner.txt", 65534), 'cannot give the link another owner');
        } else {
            unlink("$root/other-owner.txt");
            symlink('/etc/hostname', "$root/other-owner.txt"); // root's file, our link
        }
        return (string) realpath($root);
    }

    /**
     * @param array{status: int, body: string} $response
     * @return array{int, string}
     */
    private static function statusAndBody(array $response): array
    {
        return [$response['status'], $response['body']];
    }
}
