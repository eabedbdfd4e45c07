<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Site;

use Kiln\Tests\Support\KilnPerTier;
use Kiln\Tests\Support\RawClient;
use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;

/**
 * The buffer a script prints into on the sequential and fork tiers is named as the one PHP's output_buffering
 * opens under Apache, php-fpm and php-cgi ("default output handler"), so a script that asks (MediaWiki sets its
 * Content-Length, and finishes a page before its deferred updates, only under that name) behaves as there.
 */
final class OutputBufferNameTest extends TestCase
{
    use KilnPerTier;

    private const ROOT = __DIR__ . '/../../Fixtures/output-buffer';


    /** @return iterable<string, array{string}> */
    public static function tiers(): iterable
    {
        yield 'sequential' => ['sequential'];
        yield 'fork' => ['fork'];
        yield 'isolated' => ['isolated'];
    }

    #[DataProvider('tiers')]
    public function testAScriptPrintsIntoOneBufferNamedAsPhpsOwn(string $tier): void
    {
        $client = RawClient::to($this->server($tier));
        $client->send("GET /status.php HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        $response = $client->readResponse(10.0);
        $client->close();
        self::assertNotNull($response);
        self::assertSame(
            ['level' => 1, 'names' => ['default output handler'], 'name' => 'default output handler'],
            json_decode($response['body'], true),
        );
    }

    #[DataProvider('tiers')]
    public function testAPageThatMeasuresItsBufferIsSentWithItsOwnLength(string $tier): void
    {
        $client = RawClient::to($this->server($tier));
        $client->send("HEAD /deferred.php HTTP/1.1\r\nHost: x\r\n\r\nGET /deferred.php HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        $head = $client->readResponse(10.0, true);
        $get = $client->readResponse(10.0);
        $client->close();
        self::assertNotNull($head);
        self::assertSame(['20000'], $head['headers']['content-length'] ?? null, 'HEAD: the length the script set');
        self::assertNotNull($get);
        self::assertSame(['20000'], $get['headers']['content-length'] ?? null, 'as under mod_php, not chunked');
        self::assertArrayNotHasKey('transfer-encoding', $get['headers']);
        self::assertSame(20000, \strlen($get['body']));
    }

    public function testTheRenamedBufferStillCapturesAndEndsOnEveryRequest(): void
    {
        $client = RawClient::to($this->server('sequential'));
        for ($i = 0; $i < 3; $i++) {
            $client->send("GET /status.php HTTP/1.1\r\nHost: x\r\n\r\n");
            $response = $client->readResponse(10.0);
            self::assertNotNull($response, "request $i");
            self::assertSame(1, json_decode($response['body'], true)['level'] ?? null, "request $i: one buffer, not one more per request");
        }
        $client->close();
    }
}
