<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Site;

use Kiln\Tests\Support\KilnPerTier;
use Kiln\Tests\Support\RawClient;
use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;

/**
 * A script that answers HEAD with the Content-Length its GET would have, and no body (DAViCal's GET does),
 * keeps that Content-Length on every tier, as under Apache and nginx: the server does not put the length of
 * the empty body in its place, nor drop it.
 */
final class HeadLengthTest extends TestCase
{
    use KilnPerTier;

    private const ROOT = __DIR__ . '/../../Fixtures/head-length';


    /** @return iterable<string, array{string}> */
    public static function tiers(): iterable
    {
        yield 'sequential' => ['sequential'];
        yield 'fork' => ['fork'];
        yield 'isolated' => ['isolated'];
    }

    #[DataProvider('tiers')]
    public function testAHeadResponseKeepsTheLengthTheScriptDeclared(string $tier): void
    {
        $head = $this->request($tier, 'HEAD');
        self::assertSame(200, $head['status']);
        self::assertSame(['29'], $head['headers']['content-length'] ?? null);
        self::assertSame('', $head['body']);
        $get = $this->request($tier, 'GET');
        self::assertSame('BEGIN:VCALENDAR END:VCALENDAR', $get['body']);
    }

    #[DataProvider('tiers')]
    public function testAHeadResponseOfAScriptThatExitsKeepsTheLengthTheScriptDeclared(string $tier): void
    {
        $head = $this->request($tier, 'HEAD', '/exits.php');
        self::assertSame(200, $head['status']);
        self::assertSame(['42'], $head['headers']['content-length'] ?? null);
        self::assertSame('', $head['body']);
    }

    /** @return iterable<string, array{string, string}> */
    public static function undeclared(): iterable
    {
        foreach (self::tiers() as $name => [$tier]) {
            yield "$name, printed for HEAD too" => [$tier, '/printed.php'];
            yield "$name, nothing printed for HEAD" => [$tier, '/skipped.php'];
        }
    }

    /**
     * What a script prints for HEAD is not sent and says nothing of its GET (often it prints nothing): without a
     * length of its own, no Content-Length, as under Apache (the sequential tier sent the printed length, 0 for none).
     */
    #[DataProvider('undeclared')]
    public function testAHeadResponseWithoutADeclaredLengthHasNone(string $tier, string $path): void
    {
        $head = $this->request($tier, 'HEAD', $path);
        self::assertSame(200, $head['status']);
        self::assertArrayNotHasKey('content-length', $head['headers']);
        self::assertSame('', $head['body']);
    }

    /** @return array{status: int, reason: string, headers: array<string, list<string>>, body: string, raw: string} */
    private function request(string $tier, string $method, string $path = '/declared.php'): array
    {
        $client = RawClient::to($this->server($tier));
        $client->send("$method $path HTTP/1.1\r\nHost: localhost\r\n\r\n");
        $response = $client->readResponse(10.0, $method === 'HEAD');
        self::assertNotNull($response, "$method on the $tier tier got no response");
        if (($response['headers']['connection'][0] ?? '') !== 'close') { // (after exit() the worker closes it)
            // The connection stays usable after the HEAD response: nothing was framed by the declared length.
            $client->send("GET /declared.php HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
            self::assertSame(200, $client->readResponse(10.0)['status'] ?? null, "a request after $method on the $tier tier");
        }
        $client->close();
        return $response;
    }
}
