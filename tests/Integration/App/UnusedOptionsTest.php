<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\App;

use Kiln\Tests\Support\HttpClient;
use Kiln\Tests\Support\KilnProcess;
use PHPUnit\Framework\TestCase;

/** Options only a document root uses, given to an app that has none: the log says they are ignored. */
final class UnusedOptionsTest extends TestCase
{
    private ?KilnProcess $server = null;

    protected function tearDown(): void
    {
        $this->server?->stop();
        $this->server = null;
    }

    public function testAnAppWithoutASiteSaysItsDocumentRootOptionsAreIgnored(): void
    {
        $server = $this->server = KilnProcess::start(__DIR__ . '/../../Fixtures/fatal/app.php', ['--workers=1', '--tier=fork', '--fork-max=3'], ['KILN_TIME_LIMIT' => '5']);
        $server->waitForLog('~\[warning\].*--tier, --time-limit, --fork-max set how a document root runs, and this app has none \(\$app->site\(\)\): ignored~', 5.0);
        self::assertSame(200, HttpClient::get($server->baseUrl() . '/hello')['status']);
    }

    public function testAnAppWithASiteUsesThemSilently(): void
    {
        $server = $this->server = KilnProcess::start(__DIR__ . '/../../Fixtures/site-app/app.php', ['--workers=1', '--tier=fork']);
        self::assertSame(200, HttpClient::get($server->baseUrl() . '/note.txt')['status']);
        self::assertStringNotContainsString('set how a document root runs', $server->log());
    }
}
