<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Metrics;

use Kiln\Tests\Support\HttpClient;
use Kiln\Tests\Support\KilnProcess;
use PHPUnit\Framework\TestCase;

final class PhpCgiPoolMetricsTest extends TestCase
{
    public function testTheIsolatedTiersChildrenAndQueueAreSummedOverTheWorkers(): void
    {
        self::assertNotSame('', trim((string) shell_exec('command -v php-cgi')), 'php-cgi is missing: scripts/install-deps.sh installs it');
        $root = sys_get_temp_dir() . '/kiln-pool-metrics-' . bin2hex(random_bytes(4));
        mkdir($root);
        file_put_contents("$root/hello.php", '<?php echo "hello";');
        $kiln = KilnProcess::start($root, ['--workers=2', '--tier=isolated', '--pool-size=2', '--admin-listen=127.0.0.1:0']);
        $line = $kiln->waitForLog('~admin listener on http://127\.0\.0\.1:\d+~');
        $admin = preg_match('~http://127\.0\.0\.1:\d+~', $line, $m) === 1 ? $m[0] : self::fail("no admin address in: $line");
        self::assertSame(200, HttpClient::get($kiln->baseUrl() . '/hello.php')['status']);

        $deadline = microtime(true) + 10;
        while (true) {
            $text = HttpClient::get("$admin/metrics")['body'];
            preg_match_all('/^kiln_php_cgi_children\{state="(\w+)"\} (\d+)$/m', $text, $children);
            $byState = array_combine($children[1], array_map('intval', $children[2]));
            if ((($byState['idle'] ?? 0) === 4) || microtime(true) > $deadline) {
                break;
            }
            usleep(100_000);
        }
        self::assertSame(4, $byState['idle'] ?? 0, $text);
        self::assertSame(0, $byState['busy'] ?? -1, $text);
        self::assertContains('kiln_php_cgi_queued 0', explode("\n", $text));
        // The tier that answered labels each request.
        self::assertContains('kiln_http_requests_total{code="2xx",method="GET",tier="isolated"} 1', explode("\n", $text));
        self::assertContains('kiln_http_request_duration_seconds_count{tier="isolated"} 1', explode("\n", $text));

        self::assertSame(0, $kiln->stop());
        unlink("$root/hello.php");
        rmdir($root);
    }
}
