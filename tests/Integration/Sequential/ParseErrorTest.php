<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Sequential;

use Kiln\Tests\Support\HttpClient;
use Kiln\Tests\Support\KilnProcess;
use PHPUnit\Framework\TestCase;

/**
 * A script that does not parse, on the sequential tier: logged as PHP logs it ("PHP Parse error: … on line N", no
 * trace, so none of Kiln's frames), answered 500, and, as nothing of it ran, the worker serves on. (The script is
 * written here: a broken fixture file would stop the code-style tools.)
 */
final class ParseErrorTest extends TestCase
{
    private ?KilnProcess $server = null;

    private string $site = '';

    protected function setUp(): void
    {
        $this->site = sys_get_temp_dir() . '/kiln-parse-error-' . bin2hex(random_bytes(4));
        mkdir("$this->site/public", 0o755, true);
        file_put_contents("$this->site/public/broken.php", "<?php\necho \"x\"\necho \"y\";\n");
        file_put_contents("$this->site/public/pid.php", "<?php\necho getmypid();\n");
    }

    protected function tearDown(): void
    {
        $this->server?->stop();
        foreach (['broken.php', 'pid.php'] as $file) {
            @unlink("$this->site/public/$file");
        }
        @rmdir("$this->site/public");
        @rmdir($this->site);
    }

    public function testAParseErrorIsLoggedAsPhpLogsItAndTheWorkerServesOn(): void
    {
        $this->server = KilnProcess::start($this->site, ['--tier=sequential', '--workers=1']);
        $pid = HttpClient::get($this->server->baseUrl() . '/pid.php')['body'];
        for ($i = 0; $i < 2; $i++) {
            self::assertSame(500, HttpClient::get($this->server->baseUrl() . '/broken.php')['status']);
        }
        $entry = $this->server->waitForLog('~PHP Parse error:~');
        self::assertMatchesRegularExpression(
            '~\] PHP Parse error:  syntax error, unexpected token "echo", expecting "," or ";" in \S+/public/broken\.php on line 3$~',
            $entry,
        );
        self::assertSame($pid, HttpClient::get($this->server->baseUrl() . '/pid.php')['body'], 'the same worker: nothing of the script ran');
        $log = $this->server->log();
        self::assertStringNotContainsString('GlobalScope', $log, 'no frame of Kiln\'s own');
        self::assertStringNotContainsString('will be replaced', $log);
    }
}
