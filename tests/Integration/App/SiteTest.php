<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\App;

use Kiln\Tests\Support\HttpClient;
use Kiln\Tests\Support\KilnProcess;
use PHPUnit\Framework\TestCase;

/** An app's routes and its document root side by side, each path prefix on the tier the app names. */
final class SiteTest extends TestCase
{
    private static ?KilnProcess $server = null;

    public static function setUpBeforeClass(): void
    {
        self::$server = KilnProcess::start(\dirname(__DIR__, 2) . '/Fixtures/site-app/app.php', ['--workers=1', '--pool-size=1']);
    }

    public static function tearDownAfterClass(): void
    {
        self::$server?->stop();
        self::$server = null;
    }

    public function testRoutesAnswerTheirOwnPaths(): void
    {
        $response = $this->get('/hello');
        self::assertSame(200, $response['status']);
        self::assertSame(['route' => 'hello'], json_decode($response['body'], true));
    }

    public function testScriptsRunOnTheDefaultTierOfTheSite(): void
    {
        self::assertSame('sapi=cli script=/page.php', $this->get('/page.php')['body']);
        self::assertSame('sapi=cli script=/page.php', $this->get('/page')['body']);
    }

    public function testAPrefixRunsOnTheTierTheAppNames(): void
    {
        self::assertSame('sapi=cgi-fcgi script=/iso/page.php', $this->get('/iso/page.php')['body']);
    }

    public function testStaticFilesAndMissingPathsOfTheSite(): void
    {
        self::assertSame("plain text\n", $this->get('/note.txt')['body']);
        self::assertSame(404, $this->get('/missing.txt')['status']);
    }

    /** @return array{status: int, headers: array<string, list<string>>, body: string} */
    private function get(string $path): array
    {
        $server = self::$server;
        self::assertNotNull($server);
        return HttpClient::get($server->baseUrl() . $path);
    }
}
