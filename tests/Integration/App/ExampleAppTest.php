<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\App;

use Kiln\Tests\Support\HttpClient;
use Kiln\Tests\Support\KilnProcess;
use PHPUnit\Framework\TestCase;

/** The app `make serve` starts: routes, a group behind basic auth, api/ endpoints, an async route. */
final class ExampleAppTest extends TestCase
{
    private static ?KilnProcess $server = null;

    public static function setUpBeforeClass(): void
    {
        self::$server = KilnProcess::start(\dirname(__DIR__, 3) . '/examples/hello', ['--workers=1']);
    }

    public static function tearDownAfterClass(): void
    {
        self::$server?->stop();
        self::$server = null;
    }

    public function testRoutesAnswer(): void
    {
        self::assertSame('Hello, World!', $this->get('/hello')['body']);
        self::assertSame('{"message":"Hello, World!"}', $this->get('/json')['body']);
        self::assertSame('{"id":42,"name":"User 42"}', $this->get('/users/42')['body']);
        self::assertSame(404, $this->get('/users/forty-two')['status']);
        // The whole value: its first character alone is "0" one time in sixteen, which PHP counts as empty.
        self::assertMatchesRegularExpression('/^[0-9a-f]{16}-[0-9a-f]+$/', $this->get('/hello')['headers']['x-request-id'] ?? '');
    }

    public function testTheAsyncRouteRunsItsWaitsSideBySide(): void
    {
        $body = json_decode($this->get('/slow')['body'], true);
        self::assertIsArray($body);
        self::assertSame(['first', 'second'], $body['results']);
        self::assertLessThan(180, $body['ms'], 'two 100 ms waits in parallel take about 100 ms, not 200');
    }

    public function testTheAdminGroupNeedsALogin(): void
    {
        self::assertSame(401, $this->get('/admin/stats')['status']);
        $ok = $this->get('/admin/stats', ['Authorization' => 'Basic ' . base64_encode('admin:kiln')]);
        self::assertSame(200, $ok['status']);
        self::assertStringContainsString('"user_url":"/users/7"', $ok['body']);
    }

    public function testApiEndpointsAreFiles(): void
    {
        self::assertSame(2, \count(json_decode($this->get('/api/users/list?limit=2')['body'], true)['users'] ?? []));
        self::assertSame(200, $this->get('/api/time')['status']);
        self::assertSame(404, $this->get('/api/nope')['status']);
    }

    /**
     * @param array<string, string> $headers
     * @return array{status: int, headers: array<string, list<string>>, body: string}
     */
    private function get(string $path, array $headers = []): array
    {
        $server = self::$server;
        self::assertNotNull($server);
        return HttpClient::get($server->baseUrl() . $path, $headers);
    }
}
