<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Metrics;

use Kiln\Tests\Support\HttpClient;
use Kiln\Tests\Support\KilnProcess;
use Kiln\Tests\Support\StrictHttp;
use PHPUnit\Framework\TestCase;

/** A request a tier refuses at its own limit is counted with the limit's name, as the core's refusals are. */
final class RefusalMetricsTest extends TestCase
{
    private string $root = '';

    private ?KilnProcess $kiln = null;

    protected function tearDown(): void
    {
        $this->kiln?->stop();
        foreach (glob("$this->root/*") ?: [] as $file) {
            unlink($file);
        }
        if ($this->root !== '' && is_dir($this->root)) {
            rmdir($this->root);
        }
    }

    public function testAnIsolatedScriptRefusedWithTheQueueFullIsCountedAsAPhpCgiQueueRejection(): void
    {
        self::assertNotSame('', trim((string) shell_exec('command -v php-cgi')), 'php-cgi is missing: scripts/install-deps.sh installs it');
        $this->root = sys_get_temp_dir() . '/kiln-refusal-metrics-' . bin2hex(random_bytes(4));
        mkdir($this->root);
        file_put_contents("$this->root/wait.php", '<?php $until = microtime(true) + 10; while (!is_file(__DIR__ . "/go") && microtime(true) < $until) { usleep(20000); } echo "done";');
        file_put_contents("$this->root/hello.php", '<?php echo "hello";');
        // One child and no queue: while wait.php holds the child, the next script is refused.
        $this->kiln = KilnProcess::start($this->root, ['--workers=1', '--tier=isolated', '--pool-size=1', '--pool-queue=0', '--admin-listen=127.0.0.1:0']);
        $line = $this->kiln->waitForLog('~admin listener on http://127\.0\.0\.1:\d+~');
        $admin = preg_match('~http://127\.0\.0\.1:\d+~', $line, $m) === 1 ? $m[0] : self::fail("no admin address in: $line");
        // The child starts after the worker: until it is idle, a script is refused too (no queue).
        $deadline = microtime(true) + 10;
        while (!str_contains(HttpClient::get("$admin/metrics")['body'], 'kiln_php_cgi_children{state="idle"} 1') && microtime(true) < $deadline) {
            usleep(50_000);
        }
        self::assertSame(200, HttpClient::get($this->kiln->baseUrl() . '/hello.php')['status']);

        $held = StrictHttp::to($this->kiln);
        $held->send("GET /wait.php HTTP/1.1\r\nHost: x\r\n\r\n");
        $deadline = microtime(true) + 10;
        while (!str_contains(HttpClient::get("$admin/metrics")['body'], 'kiln_php_cgi_children{state="busy"} 1') && microtime(true) < $deadline) {
            usleep(50_000);
        }
        $refused = HttpClient::get($this->kiln->baseUrl() . '/hello.php');
        touch("$this->root/go");
        self::assertSame(503, $refused['status']);
        self::assertSame(200, $held->read()['status']);

        // The workers' series reach the admin listener on their next report: wait for all three requests.
        $deadline = microtime(true) + 10;
        while (true) {
            $lines = explode("\n", HttpClient::get("$admin/metrics")['body']);
            if (\in_array('kiln_http_requests_total{code="2xx",method="GET",tier="isolated"} 2', $lines, true) || microtime(true) > $deadline) {
                break;
            }
            usleep(100_000);
        }
        self::assertContains('kiln_http_rejections_total{code="503",reason="php_cgi_queue"} 1', $lines, implode("\n", $lines));
        self::assertContains('kiln_http_requests_total{code="5xx",method="GET",tier="isolated"} 1', $lines);
    }
}
