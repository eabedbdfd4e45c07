<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Cli;

use Kiln\Tests\Support\HttpClient;
use Kiln\Tests\Support\KilnProcess;
use PHPUnit\Framework\TestCase;

/** `kiln serve --watch`: edits are served without a restart; a file that does not compile is reported and not loaded. */
final class WatchTest extends TestCase
{
    private string $dir;

    protected function setUp(): void
    {
        $this->dir = sys_get_temp_dir() . '/kiln-watch-' . bin2hex(random_bytes(4));
        mkdir($this->dir . '/lib', 0777, true);
        file_put_contents($this->dir . '/app.php', <<<'PHP'
            <?php
            require_once __DIR__ . '/lib/answer.php';
            $app = new Kiln\App\App();
            $app->get('/', fn() => answer());
            return $app;
            PHP);
        $this->writeAnswer('first');
    }

    protected function tearDown(): void
    {
        foreach (['lib/answer.php', 'app.php'] as $file) {
            @unlink("$this->dir/$file");
        }
        @rmdir("$this->dir/lib");
        @rmdir($this->dir);
    }

    public function testAnEditToAnIncludedFileIsServedWithoutARestart(): void
    {
        $kiln = KilnProcess::start($this->dir, ['--watch', '--workers=2']);
        self::assertSame('first', HttpClient::get($kiln->baseUrl() . '/')['body']);
        $this->writeAnswer('second, edited');
        self::assertSame('second, edited', $this->waitForBody($kiln, 'second, edited', 10.0), $kiln->log());
        $kiln->waitForLog('~--watch: lib/answer\.php changed: reloading the workers~', 5);
        self::assertSame(0, $kiln->stop());
    }

    public function testAFileThatNoLongerCompilesIsReportedWithItsLineAndTheOldWorkersServeOn(): void
    {
        $kiln = KilnProcess::start($this->dir, ['--watch', '--workers=2']);
        $before = $kiln->workerPids();
        self::assertCount(2, $before, 'the two workers whose replacement is looked for');
        file_put_contents("$this->dir/lib/answer.php", "<?php\nfunction answer(): string\n{\n    return 'broken'\n}\n");
        $kiln->waitForLog('~--watch: .*syntax error.* in ' . preg_quote("$this->dir/lib/answer.php", '~') . ' on line 5; the workers keep serving~', 10);
        self::assertSame('first', HttpClient::get($kiln->baseUrl() . '/')['body']);
        self::assertSame($before, $kiln->workerPids(), 'no worker was replaced');
        // Once fixed, the fix is served.
        $this->writeAnswer('fixed');
        self::assertSame('fixed', $this->waitForBody($kiln, 'fixed', 10.0), $kiln->log());
        self::assertSame(0, $kiln->stop());
    }

    public function testWatchCannotBeCombinedWithDaemon(): void
    {
        [$code, , $stderr] = KilnProcess::run(['serve', $this->dir, '--watch', '--daemon', '--listen=127.0.0.1:0']);
        self::assertSame(2, $code);
        self::assertStringContainsString('--watch', $stderr);
    }

    private function writeAnswer(string $answer): void
    {
        file_put_contents("$this->dir/lib/answer.php", "<?php\nfunction answer(): string\n{\n    return '$answer';\n}\n");
    }

    /** Polls until the body is $expected or the time is up; returns the last body seen. */
    private function waitForBody(KilnProcess $kiln, string $expected, float $timeout): string
    {
        $end = microtime(true) + $timeout;
        do {
            $body = HttpClient::get($kiln->baseUrl() . '/')['body'];
            if ($body === $expected) {
                return $body;
            }
            usleep(100_000);
        } while (microtime(true) < $end);
        return $body;
    }
}
