<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Htaccess;

use Kiln\Tests\Support\HttpClient;
use Kiln\Tests\Support\KilnProcess;
use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;

/**
 * Security regression: a command-line script guarded by `php_sapi_name() != 'cli'` (a poller, a cron job, an
 * installer) must not run over HTTP. Under a web SAPI the guard stops it; the sequential and fork tiers run PHP's
 * CLI SAPI, where it passes, so they refuse such a script (403, and the log says why). The isolated tier runs
 * php-cgi, whose guard works as under php-fpm. A script that tells a shell by getopt() (false without a command
 * line) stops by itself on every tier: the sequential and fork tiers keep the process's command line from it.
 */
final class CliOnlyScriptTest extends TestCase
{
    private const PUBLIC = __DIR__ . '/../../Fixtures/cli-only/public';

    /** @return array<string, array{string}> */
    public static function cliSapiTiers(): array
    {
        return ['sequential' => ['sequential'], 'fork' => ['fork']];
    }

    #[DataProvider('cliSapiTiers')]
    public function testACommandLineScriptIsRefusedOverHttp(string $tier): void
    {
        $mark = sys_get_temp_dir() . '/kiln-cli-only-' . getmypid() . '-' . bin2hex(random_bytes(4));
        $server = KilnProcess::start(self::PUBLIC, ["--tier=$tier", '--workers=1'], ['KILN_TEST_CLI_MARK' => $mark]);
        try {
            $refused = HttpClient::get($server->baseUrl() . '/poller.php');
            self::assertSame(403, $refused['status']);
            self::assertStringNotContainsString('polled', $refused['body']);
            self::assertFileDoesNotExist($mark, 'the script ran past its guard');
            $server->waitForLog('~/poller\.php: 403, not run: the script stops unless PHP runs from the command line~');
            $daemon = HttpClient::get($server->baseUrl() . '/daemon.php');
            self::assertSame("refused: no command line\n", $daemon['body'], 'getopt() gives false, as under a web SAPI');
            self::assertFileDoesNotExist("$mark.daemon", 'the script ran past its getopt() test');
            $page = HttpClient::get($server->baseUrl() . '/page.php');
            self::assertSame(200, $page['status'], 'a script that only looks at the SAPI is served');
            self::assertSame("page\n", $page['body']);
        } finally {
            $server->stop();
            @unlink($mark);
            @unlink("$mark.daemon");
        }
    }
}
