<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Htaccess;

use Kiln\Tests\Support\HttpClient;
use Kiln\Tests\Support\KilnProcess;
use Kiln\Tests\Support\PeerProcess;
use PHPUnit\Framework\TestCase;

/**
 * .htaccess rules that fail rather than refuse on purpose (a rewrite loop, a rewrite above the document root):
 * the client gets the status Apache gives, and the error log says why, once per path and worker.
 */
final class FailingRulesLogTest extends TestCase
{
    private ?KilnProcess $kiln = null;

    private ?string $root = null;

    protected function tearDown(): void
    {
        $this->kiln?->stop();
        $this->kiln = null;
        if ($this->root !== null) {
            PeerProcess::removeDir($this->root);
            $this->root = null;
        }
    }

    public function testARewriteLoopAndARewriteAboveTheRootAreLoggedWithTheirReason(): void
    {
        $root = $this->root = PeerProcess::tempDir('kiln-failing-rules');
        mkdir("$root/loop");
        file_put_contents("$root/loop/.htaccess", "RewriteEngine On\nRewriteRule ^(.*)$ x$1 [L]\n");
        mkdir("$root/up");
        file_put_contents("$root/up/.htaccess", "RewriteEngine On\nRewriteRule ^(.*)$ ../../../etc/$1 [L]\n");
        file_put_contents("$root/ok.php", '<?php echo "ok";');
        $kiln = $this->kiln = KilnProcess::start($root, ['--tier=sequential', '--workers=1']);
        $base = $kiln->baseUrl();

        self::assertSame(500, HttpClient::get("$base/loop/a", [], 10.0)['status']);
        self::assertSame(500, HttpClient::get("$base/loop/a", [], 10.0)['status']);
        self::assertSame(400, HttpClient::get("$base/up/passwd", [], 10.0)['status']);
        self::assertSame(200, HttpClient::get("$base/ok.php", [], 10.0)['status'], 'the server serves on');

        $kiln->waitForLog('~/up/passwd: 400, \.htaccess: rewritten to a path above the root~', 5.0);
        $log = $kiln->log();
        self::assertSame(1, preg_match_all('~/loop/a: 500, \.htaccess: more than 10 internal rewrites \(a rewrite loop\?\)~', $log), "once per path and worker:\n$log");
    }
}
