<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Site;

use Kiln\Tests\Support\KilnPerTier;
use Kiln\Tests\Support\KilnProcess;
use Kiln\Tests\Support\RawClient;
use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;

/**
 * A script's own Content-Length on the tiers that stream a script's output (fork; isolated past what it holds to
 * send whole): the client gets it, as from Apache and nginx, so a download shows its size, instead of a chunked
 * body of unknown length. A streamed body longer than it says is cut at its length; a shorter one closes the
 * connection. (A page the isolated tier holds whole goes out with its own length, whatever the script said.)
 */
final class ScriptContentLengthTest extends TestCase
{
    use KilnPerTier;

    private const ROOT = __DIR__ . '/../../Fixtures/content-length';

    private const SIZE = 2 * 1024 * 1024;


    /** @return iterable<string, array{string}> */
    public static function tiers(): iterable
    {
        yield 'fork' => ['fork'];
        yield 'isolated' => ['isolated'];
    }

    #[DataProvider('tiers')]
    public function testAStreamedDownloadIsSentWithTheLengthTheScriptSet(string $tier): void
    {
        $client = RawClient::to($this->server($tier));
        $client->send("GET /download.php HTTP/1.1\r\nHost: x\r\n\r\n");
        $response = $client->readResponse(20.0);
        self::assertNotNull($response);
        self::assertSame(200, $response['status']);
        self::assertSame([(string) self::SIZE], $response['headers']['content-length'] ?? null, 'the script\'s own length, as Apache and nginx send it');
        self::assertArrayNotHasKey('transfer-encoding', $response['headers']);
        self::assertSame(self::SIZE, \strlen($response['body']));
        self::assertSame(self::SIZE / 65536, preg_match_all('/(.)\\1{65535}/', $response['body']), 'every piece, whole');

        $client->send("HEAD /download.php HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        $head = $client->readResponse(10.0, true);
        self::assertNotNull($head, 'the connection stays open after a body of the length it said');
        self::assertSame([(string) self::SIZE], $head['headers']['content-length'] ?? null, 'HEAD: the length a GET gets');
        self::assertSame('', $head['body']);
        $client->close();
    }

    public function testAForkTierPageThatEndsWithinItsBufferIsSentWithItsLength(): void
    {
        $client = RawClient::to($this->server('fork'));
        $client->send("GET /page.php HTTP/1.0\r\nHost: x\r\nConnection: keep-alive\r\n\r\n");
        $response = $client->readResponse(10.0);
        self::assertNotNull($response);
        self::assertSame(['5'], $response['headers']['content-length'] ?? null, 'as the isolated tier and mod_php send a short page');
        self::assertArrayNotHasKey('transfer-encoding', $response['headers']);
        self::assertSame('hello', $response['body']);
        $client->send("GET /page.php?empty=1 HTTP/1.0\r\nHost: x\r\nConnection: keep-alive\r\n\r\n");
        $empty = $client->readResponse(10.0);
        self::assertNotNull($empty, 'HTTP/1.0 keeps its connection: the length frames the body');
        self::assertSame(['0'], $empty['headers']['content-length'] ?? null);
        $client->send("GET /page.php?status=204 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        $noContent = $client->readResponse(10.0);
        self::assertNotNull($noContent);
        self::assertSame(204, $noContent['status']);
        self::assertArrayNotHasKey('content-length', $noContent['headers'], 'a 204 has no length');
        $client->close();
    }

    public function testABodyLongerThanItsContentLengthIsCutThereAndTheConnectionServesOn(): void
    {
        $server = $this->server('fork');
        $client = RawClient::to($server);
        $client->send("GET /wrong.php HTTP/1.1\r\nHost: x\r\n\r\nGET /wrong.php HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        foreach ([1, 2] as $n) {
            $response = $client->readResponse(10.0);
            self::assertNotNull($response, "response $n");
            self::assertSame(['5'], $response['headers']['content-length'] ?? null);
            self::assertSame('hello', $response['body'], "response $n: what is past the length is not sent, so it cannot pose as the next response");
        }
        self::assertSame('', $client->readUntilClosed(5.0));
        $client->close();
        $this->assertLogged($server, 'GET /wrong.php declared Content-Length: 5 and its body went on for 6 bytes more');
    }

    public function testABodyShorterThanItsContentLengthEndsTheConnection(): void
    {
        $server = $this->server('fork');
        $client = RawClient::to($server);
        $client->send("GET /wrong.php?short=1 HTTP/1.1\r\nHost: x\r\n\r\n");
        $raw = $client->readUntilClosed(10.0);
        $client->close();
        self::assertStringContainsString("Content-Length: 20\r\n", $raw);
        self::assertStringEndsWith("\r\n\r\nhello world", $raw, 'the 11 bytes there are, then the close: the client sees the message is short');
        $this->assertLogged($server, 'GET /wrong.php?short=1 declared Content-Length: 20 but its body ended after 11 bytes');
    }

    private function assertLogged(KilnProcess $server, string $line): void
    {
        $deadline = microtime(true) + 5.0;
        while (!str_contains($server->log(), $line) && microtime(true) < $deadline) {
            usleep(20_000);
        }
        self::assertStringContainsString($line, $server->log());
    }
}
