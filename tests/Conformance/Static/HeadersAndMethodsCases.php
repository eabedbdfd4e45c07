<?php

declare(strict_types=1);

namespace Kiln\Tests\Conformance\Static;

use PHPUnit\Framework\Attributes\DataProvider;

/** Content types, validators, HEAD and methods, on the wire. */
abstract class HeadersAndMethodsCases extends StaticTestCase
{
    /** @return iterable<string, array{string, string}> */
    public static function types(): iterable
    {
        yield 'html' => ['/index.html', 'text/html; charset=utf-8'];
        yield 'text' => ['/hello.txt', 'text/plain; charset=utf-8'];
        yield 'css' => ['/small.css', 'text/css; charset=utf-8'];
        yield 'javascript' => ['/app.js', 'text/javascript; charset=utf-8'];
        yield 'json' => ['/data.json', 'application/json; charset=utf-8'];
        yield 'svg' => ['/logo.svg', 'image/svg+xml'];
        yield 'png' => ['/photo.png', 'image/png'];
        yield 'woff2' => ['/font.woff2', 'font/woff2'];
        yield 'unknown' => ['/unknown.xyz', 'application/octet-stream'];
        yield 'binary' => ['/data.bin', 'application/octet-stream'];
        yield 'tarball: a gzip file, not a gzip encoding' => ['/archive.tar.gz', 'application/gzip'];
        yield 'directory index' => ['/sub/', 'text/html; charset=utf-8'];
    }

    #[DataProvider('types')]
    public function testEachFileGetsTheContentTypeOfItsExtension(string $path, string $type): void
    {
        $response = self::get($path, ['Accept-Encoding' => 'gzip, br']);
        self::assertSame(200, $response['status']);
        self::assertSame($type, self::header($response, 'Content-Type'));
        if ($path === '/archive.tar.gz') {
            self::assertNull(self::header($response, 'Content-Encoding'));
            self::assertSame(file_get_contents(self::site()->path('archive.tar.gz')), $response['body']);
        }
    }

    public function testAFileIsSentWholeWithItsLengthAndValidators(): void
    {
        $response = self::get('/data.bin');
        $path = self::site()->path('data.bin');
        self::assertSame(200, $response['status']);
        self::assertSame(file_get_contents($path), $response['body']);
        self::assertSame('100000', self::header($response, 'Content-Length'));
        self::assertSame('bytes', self::header($response, 'Accept-Ranges'));
        self::assertSame(gmdate('D, d M Y H:i:s', (int) filemtime($path)) . ' GMT', self::header($response, 'Last-Modified'));
        self::assertMatchesRegularExpression('~^"[0-9a-f]+-[0-9a-f]+"$~', (string) self::header($response, 'ETag'));
        self::assertNull(self::header($response, 'Cache-Control'), 'no Cache-Control unless configured');
        self::assertNull(self::header($response, 'Vary'), 'binary types never vary');
    }

    public function testAnEmptyFileIsAnEmpty200(): void
    {
        $response = self::get('/empty.txt');
        self::assertSame(200, $response['status']);
        self::assertSame('0', self::header($response, 'Content-Length'));
        self::assertSame('', $response['body']);
    }

    public function testHeadSendsTheSameHeadersAsGetAndNoBody(): void
    {
        foreach (['/data.bin', '/hello.txt', '/style.css', '/empty.txt'] as $path) {
            $get = self::get($path);
            $head = self::request('HEAD', $path);
            self::assertSame(200, $head['status']);
            self::assertSame('', $head['body']);
            self::assertStringEndsWith("\r\n\r\n", $head['raw'], 'nothing after the head');
            $strip = static fn(array $h): array => array_diff_key($h, ['date' => 1, 'connection' => 1]);
            self::assertSame($strip($get['headers']), $strip($head['headers']), $path);
        }
    }

    public function testHeadOfACompressedVariantHasItsHeadersAndNoBody(): void
    {
        $head = self::request('HEAD', '/style.css', ['Accept-Encoding' => 'gzip']);
        self::assertSame('gzip', self::header($head, 'Content-Encoding'));
        self::assertSame('', $head['body']);
        $pre = self::request('HEAD', '/app.js', ['Accept-Encoding' => 'gzip']);
        self::assertSame((string) filesize(self::site()->path('app.js.gz')), self::header($pre, 'Content-Length'));
    }

    /** @return iterable<string, array{string}> */
    public static function methods(): iterable
    {
        foreach (['PUT', 'DELETE', 'PATCH', 'OPTIONS'] as $method) {
            yield $method => [$method];
        }
    }

    #[DataProvider('methods')]
    public function testMethodsOtherThanGetHeadAndPostAre405WithAllow(string $method): void
    {
        $response = self::request($method, '/hello.txt', ['Content-Length' => '0']);
        self::assertSame(405, $response['status']);
        self::assertSame(static::throughDocumentRoot() ? 'GET, HEAD, POST' : 'GET, HEAD', self::header($response, 'Allow'));
    }

    /** A document root serves POST as Apache does; StaticFiles on its own (an app's files) as nginx does. */
    public function testPostGetsTheFileThroughADocumentRootAndA405Otherwise(): void
    {
        $response = self::request('POST', '/hello.txt', ['Content-Length' => '0']);
        if (static::throughDocumentRoot()) {
            self::assertSame([200, "Hello, world!\n"], [$response['status'], $response['body']]);
        } else {
            self::assertSame([405, 'GET, HEAD'], [$response['status'], self::header($response, 'Allow')]);
        }
    }

    public function testHttp10ClientsGetTheLength(): void
    {
        $response = self::request('GET', '/hello.txt', [], '1.0');
        self::assertSame(200, $response['status']);
        self::assertSame("Hello, world!\n", $response['body']);
        self::assertSame('14', self::header($response, 'Content-Length'));
    }

    public function testManyRequestsOnOneKeepAliveConnection(): void
    {
        $client = \Kiln\Tests\Support\RawClient::to(self::server());
        $request = "GET /hello.txt HTTP/1.1\r\nHost: x\r\n\r\nGET /data.json HTTP/1.1\r\nHost: x\r\nRange: bytes=1-2\r\n\r\n"
            . "HEAD /data.bin HTTP/1.1\r\nHost: x\r\n\r\nGET /empty.txt HTTP/1.1\r\nHost: x\r\n\r\n";
        $client->send($request);
        self::assertSame("Hello, world!\n", $client->readResponse()['body'] ?? null);
        self::assertSame('"a', $client->readResponse()['body'] ?? null);
        self::assertSame('100000', ($client->readResponse(5.0, true)['headers']['content-length'][0] ?? null));
        self::assertSame(200, $client->readResponse()['status'] ?? null);
        $client->close();
    }
}
