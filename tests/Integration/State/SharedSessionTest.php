<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\State;

use Kiln\Tests\Support\KilnProcess;
use PHPUnit\Framework\TestCase;

/**
 * An App route and a classic script of the sequential tier (native session_start()) share one session: one
 * cookie, one $_SESSION, in the node's store.
 */
final class SharedSessionTest extends TestCase
{
    private static ?KilnProcess $kiln = null;

    public static function setUpBeforeClass(): void
    {
        self::$kiln = KilnProcess::start(__DIR__ . '/../../Fixtures/state/app.php');
    }

    public static function tearDownAfterClass(): void
    {
        self::$kiln?->stop();
        self::$kiln = null;
    }

    public function testARouteAndAClassicScriptReadAndWriteTheSameSession(): void
    {
        $first = $this->get('/route/visits');
        self::assertSame(1, preg_match('/^PHPSESSID=([0-9a-f]{32});/', $first['headers']['set-cookie'] ?? '', $m));
        $id = $m[1];
        $cookie = "PHPSESSID=$id";

        $classic = $this->get('/classic.php', $cookie);
        self::assertSame(['visits' => 2, 'id' => $id], $this->json($classic));
        self::assertArrayNotHasKey('set-cookie', $classic['headers'], 'the script keeps the route\'s cookie');

        self::assertSame(['visits' => 3, 'classic' => 'set by a script', 'id' => $id], $this->json($this->get('/route/visits', $cookie)));
        self::assertSame(['visits' => 4, 'id' => $id], $this->json($this->get('/classic.php', $cookie)));
    }

    public function testASessionAScriptStartsIsTheRoutesToo(): void
    {
        $classic = $this->get('/classic.php');
        $cookie = $classic['headers']['set-cookie'] ?? '';
        self::assertSame(1, preg_match('/^PHPSESSID=([A-Za-z0-9,-]{22,128}); path=\/; HttpOnly; SameSite=Lax$/i', $cookie, $m), $cookie);
        self::assertSame(['visits' => 2, 'classic' => 'set by a script', 'id' => $m[1]], $this->json($this->get('/route/visits', "PHPSESSID=$m[1]")));
    }

    public function testAScriptGivenAnUnknownIdStartsANewSessionInstead(): void
    {
        $chosen = str_repeat('b', 32);
        $classic = $this->get('/classic.php', "PHPSESSID=$chosen");
        $answer = $this->json($classic);
        self::assertSame(1, $answer['visits']);
        self::assertNotSame($chosen, $answer['id']);
        self::assertStringContainsString("PHPSESSID={$answer['id']}", $classic['headers']['set-cookie'] ?? '');
        // The id the client chose names no session for the routes either.
        self::assertSame(1, $this->json($this->get('/route/visits', "PHPSESSID=$chosen"))['visits']);
    }

    public function testConcurrentRequestsOfOneSessionKeepEachOthersKeys(): void
    {
        \assert(self::$kiln !== null);
        $first = $this->get('/route/visits');
        self::assertSame(1, preg_match('/^PHPSESSID=([0-9a-f]{32});/', $first['headers']['set-cookie'] ?? '', $m));
        $cookie = ['Cookie' => "PHPSESSID=$m[1]"];
        $keys = array_map(static fn(int $i): string => "k$i", range(1, 16));
        $requests = array_map(static fn(string $key): array => ['POST', "/route/keys/$key", '', $cookie], $keys);
        foreach (Http::parallel(self::$kiln->host(), self::$kiln->port(), $requests) as $response) {
            self::assertSame(200, $response['status'], $response['body']);
        }
        $stored = $this->json($this->get('/route/keys', "PHPSESSID=$m[1]"));
        sort($stored);
        $expected = ['visits', ...array_map(static fn(string $key): string => "key_$key", $keys)];
        sort($expected);
        self::assertSame($expected, $stored, 'every request read the session before the others wrote, and no key was lost');
    }

    /** @return array{status: int, headers: array<string, string>, body: string} */
    private function get(string $path, ?string $cookie = null): array
    {
        \assert(self::$kiln !== null);
        $response = Http::one(self::$kiln->host(), self::$kiln->port(), 'GET', $path, '', $cookie === null ? [] : ['Cookie' => $cookie]);
        self::assertSame(200, $response['status'], $response['body']);
        return $response;
    }

    /**
     * @param array{status: int, headers: array<string, string>, body: string} $response
     * @return array<string, mixed>
     */
    private function json(array $response): array
    {
        $data = json_decode($response['body'], true, flags: \JSON_THROW_ON_ERROR);
        self::assertIsArray($data);
        return $data;
    }
}
