<?php

declare(strict_types=1);

namespace Kiln\Tests\Security;

use Kiln\Tests\Support\KilnProcess;
use Kiln\Tests\Support\RawClient;
use PHPUnit\Framework\TestCase;

/** Paths that try to leave the document root, reach dotfiles or read PHP source are refused; scripts run, never sent. */
final class DocumentRootEscapeTest extends TestCase
{
    private static ?KilnProcess $server = null;

    public static function setUpBeforeClass(): void
    {
        self::$server = KilnProcess::start(\dirname(__DIR__) . '/Fixtures/docroot', ['--workers=1']);
    }

    public static function tearDownAfterClass(): void
    {
        self::$server?->stop();
        self::$server = null;
    }

    /** @return iterable<string, array{string, list<int>}> */
    public static function escapes(): iterable
    {
        yield 'dot-dot' => ['/../secret.txt', [400, 404]];
        yield 'encoded dot-dot' => ['/%2e%2e/secret.txt', [400, 404]];
        yield 'encoded slash' => ['/sub%2f..%2f..%2fsecret.txt', [400]];
        yield 'backslash' => ['/..%5csecret.txt', [400]];
        yield 'NUL' => ['/index.html%00.txt', [400]];
        yield 'symlink out of the root' => ['/escape.txt', [403, 404]];
        yield 'dotfile' => ['/.env', [403, 404]];
        yield 'PHP source is run, never sent' => ['/page.php', [200]];
        yield 'PHP source shown as .phps' => ['/page.phps', [403, 404]];
        yield 'PHP editor backup' => ['/page.php~', [403, 404]];
        yield 'include file' => ['/config.inc', [403, 404]];
        yield 'double-encoded dot-dot' => ['/%252e%252e/secret.txt', [400, 404]];
    }

    /**
     * @dataProvider escapes
     * @param list<int> $statuses
     */
    public function testPathTraversalAndHiddenFilesAreRefused(string $path, array $statuses): void
    {
        $response = $this->get($path);
        self::assertContains($response['status'], $statuses);
        self::assertStringNotContainsString('outside', $response['body']);
        self::assertStringNotContainsString('SECRET', $response['body']);
        self::assertStringNotContainsString('password', $response['body']);
        self::assertStringNotContainsString('<?php', $response['body']);
    }

    public function testFilesInsideTheRootAreServed(): void
    {
        $index = $this->get('/');
        self::assertSame(200, $index['status']);
        self::assertSame("<h1>index</h1>\n", $index['body']);
        self::assertStringStartsWith('text/html', $index['headers']['content-type'][0] ?? '');
        $css = $this->get('/style.css');
        self::assertStringStartsWith('text/css', $css['headers']['content-type'][0] ?? '');
        self::assertSame(301, $this->get('/sub')['status']);
        self::assertSame("sub page\n", $this->get('/sub/')['body']);
        self::assertSame("acme\n", $this->get('/.well-known/acme.txt')['body']);
        $etag = $css['headers']['etag'][0] ?? '';
        self::assertNotSame('', $etag);
        self::assertSame(304, $this->get('/style.css', "If-None-Match: $etag\r\n")['status']);
    }

    /** @return array{status: int, reason: string, headers: array<string, list<string>>, body: string, raw: string} */
    private function get(string $path, string $extra = ''): array
    {
        $server = self::$server;
        self::assertNotNull($server);
        $client = RawClient::to($server);
        $client->send("GET $path HTTP/1.1\r\nHost: x\r\nConnection: close\r\n$extra\r\n");
        $response = $client->readResponse();
        $client->close();
        self::assertNotNull($response);
        return $response;
    }
}
