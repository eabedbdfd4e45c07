<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Htaccess;

use Kiln\Tests\Support\HttpClient;
use Kiln\Tests\Support\KilnProcess;
use PHPUnit\Framework\TestCase;

/** `.htaccess` rules given to `$app->site(rules: …)` apply as a file's would, beside the app's routes. */
final class AppRulesTest extends TestCase
{
    private static ?KilnProcess $server = null;

    public static function setUpBeforeClass(): void
    {
        self::$server = KilnProcess::start(__DIR__ . '/../../Fixtures/site-rules/app.php', ['--workers=1']);
    }

    public static function tearDownAfterClass(): void
    {
        self::$server?->stop();
        self::$server = null;
    }

    public function testARewriteRuleFromAppPhpRedirectsAndRewrites(): void
    {
        $redirect = $this->get('/old');
        self::assertSame(301, $redirect['status']);
        self::assertStringEndsWith('/new.php', $redirect['headers']['location'] ?? '');
        $pretty = $this->get('/pretty/kiln?x=1');
        self::assertSame([200, 'new kiln'], [$pretty['status'], $pretty['body']]);
    }

    public function testARequireFromAppPhpRefusesItsDirectory(): void
    {
        self::assertSame(403, $this->get('/private/secret.txt')['status']);
    }

    public function testRoutesStillAnswerTheirPaths(): void
    {
        self::assertSame([200, 'a route'], [$this->get('/route')['status'], $this->get('/route')['body']]);
    }

    /** @return array{status: int, headers: array<string, string>, body: string} */
    private function get(string $target): array
    {
        $server = self::$server;
        self::assertNotNull($server);
        return HttpClient::get($server->baseUrl() . $target);
    }
}
