<?php

declare(strict_types=1);

namespace Kiln\Tests\Conformance\Static;

/**
 * Precompressed siblings (app.js.gz, app.js.br, only-br.json.br) and on-the-fly gzip (style.css,
 * 20 000 bytes of CSS with no sibling), negotiated by Accept-Encoding.
 */
abstract class CompressionCases extends StaticTestCase
{
    public function testTheGzipSiblingIsSentToAGzipClient(): void
    {
        $response = self::get('/app.js', ['Accept-Encoding' => 'gzip']);
        self::assertSame(200, $response['status']);
        self::assertSame('gzip', self::header($response, 'Content-Encoding'));
        self::assertSame('text/javascript; charset=utf-8', self::header($response, 'Content-Type'), 'the type of the original');
        self::assertSame('Accept-Encoding', self::header($response, 'Vary'));
        self::assertSame(file_get_contents(self::site()->path('app.js.gz')), $response['body']);
        self::assertSame(file_get_contents(self::site()->path('app.js')), gzdecode($response['body']));
        self::assertSame((string) filesize(self::site()->path('app.js.gz')), self::header($response, 'Content-Length'));
    }

    public function testBrotliIsPreferredWhenBothAreAcceptedEqually(): void
    {
        $response = self::get('/app.js', ['Accept-Encoding' => 'gzip, deflate, br']);
        self::assertSame('br', self::header($response, 'Content-Encoding'));
        self::assertSame(file_get_contents(self::site()->path('app.js.br')), $response['body']);
    }

    public function testQValuesChooseTheVariant(): void
    {
        self::assertSame('gzip', self::header(self::get('/app.js', ['Accept-Encoding' => 'br;q=0.5, gzip;q=0.9']), 'Content-Encoding'));
        self::assertSame('gzip', self::header(self::get('/app.js', ['Accept-Encoding' => 'br;q=0, gzip']), 'Content-Encoding'));
        self::assertSame('br', self::header(self::get('/app.js', ['Accept-Encoding' => '*']), 'Content-Encoding'));
        $identity = self::get('/app.js', ['Accept-Encoding' => 'identity, gzip;q=0.5']);
        self::assertNull(self::header($identity, 'Content-Encoding'));
        self::assertSame(file_get_contents(self::site()->path('app.js')), $identity['body']);
    }

    public function testNoAcceptEncodingGetsIdentityWithVary(): void
    {
        foreach ([[], ['Accept-Encoding' => ''], ['Accept-Encoding' => 'gzip;q=0, br;q=0']] as $headers) {
            $response = self::get('/app.js', $headers);
            self::assertNull(self::header($response, 'Content-Encoding'));
            self::assertSame('Accept-Encoding', self::header($response, 'Vary'));
            self::assertSame(file_get_contents(self::site()->path('app.js')), $response['body']);
        }
    }

    public function testIdentityRefusedStillGetsACodingWhenThereIsOne(): void
    {
        $response = self::get('/app.js', ['Accept-Encoding' => 'gzip, identity;q=0']);
        self::assertSame('gzip', self::header($response, 'Content-Encoding'));
    }

    public function testAGzipOnlyClientGetsOnTheFlyGzipWhenOnlyBrotliIsPrecompressed(): void
    {
        $response = self::get('/only-br.json', ['Accept-Encoding' => 'gzip']);
        self::assertSame('gzip', self::header($response, 'Content-Encoding'));
        self::assertSame(file_get_contents(self::site()->path('only-br.json')), gzdecode($response['body']));
        self::assertSame('br', self::header(self::get('/only-br.json', ['Accept-Encoding' => 'br, gzip']), 'Content-Encoding'));
    }

    public function testEachVariantHasItsOwnEntityTag(): void
    {
        $tags = [];
        foreach (['identity', 'gzip', 'br'] as $coding) {
            $tags[$coding] = (string) self::header(self::get('/app.js', ['Accept-Encoding' => $coding]), 'ETag');
        }
        self::assertCount(3, array_unique($tags));
        self::assertSame(304, self::get('/app.js', ['Accept-Encoding' => 'gzip', 'If-None-Match' => $tags['gzip']])['status']);
        self::assertSame(200, self::get('/app.js', ['Accept-Encoding' => 'br', 'If-None-Match' => $tags['gzip']])['status']);
        $notModified = self::get('/app.js', ['Accept-Encoding' => 'br', 'If-None-Match' => $tags['br']]);
        self::assertSame(304, $notModified['status']);
        self::assertSame('Accept-Encoding', self::header($notModified, 'Vary'));
    }

    public function testARangeOfAPrecompressedVariantCountsEncodedBytes(): void
    {
        $gz = (string) file_get_contents(self::site()->path('app.js.gz'));
        $response = self::get('/app.js', ['Accept-Encoding' => 'gzip', 'Range' => 'bytes=0-9']);
        self::assertSame(206, $response['status']);
        self::assertSame('gzip', self::header($response, 'Content-Encoding'));
        self::assertSame('bytes 0-9/' . \strlen($gz), self::header($response, 'Content-Range'));
        self::assertSame(substr($gz, 0, 10), $response['body']);
    }

    public function testLargeCompressibleFilesAreGzippedOnTheFlyAndStreamed(): void
    {
        $original = (string) file_get_contents(self::site()->path('style.css'));
        $response = self::get('/style.css', ['Accept-Encoding' => 'gzip, deflate']);
        self::assertSame(200, $response['status']);
        self::assertSame('gzip', self::header($response, 'Content-Encoding'));
        self::assertSame('chunked', self::header($response, 'Transfer-Encoding'));
        self::assertNull(self::header($response, 'Content-Length'));
        self::assertNull(self::header($response, 'Accept-Ranges'));
        self::assertSame('Accept-Encoding', self::header($response, 'Vary'));
        self::assertStringStartsWith('W/"', (string) self::header($response, 'ETag'));
        self::assertSame($original, gzdecode($response['body']));
        self::assertLessThan(\strlen($original) / 2, \strlen($response['body']));
    }

    public function testOnTheFlyGzipRevalidatesWithItsWeakTag(): void
    {
        $etag = (string) self::header(self::get('/style.css', ['Accept-Encoding' => 'gzip']), 'ETag');
        self::assertSame(304, self::get('/style.css', ['Accept-Encoding' => 'gzip', 'If-None-Match' => $etag])['status']);
        self::assertSame(200, self::get('/style.css', ['If-None-Match' => $etag])['status'], 'the identity variant has another tag');
    }

    public function testARangeRequestGetsIdentityBytesNotOnTheFlyGzip(): void
    {
        $original = (string) file_get_contents(self::site()->path('style.css'));
        $response = self::get('/style.css', ['Accept-Encoding' => 'gzip', 'Range' => 'bytes=100-199']);
        self::assertSame(206, $response['status']);
        self::assertNull(self::header($response, 'Content-Encoding'));
        self::assertSame(substr($original, 100, 100), $response['body']);
    }

    public function testSmallFilesAreNotCompressed(): void
    {
        $response = self::get('/small.css', ['Accept-Encoding' => 'gzip']);
        self::assertNull(self::header($response, 'Content-Encoding'));
        self::assertSame('500', self::header($response, 'Content-Length'));
    }

    public function testIncompressibleTypesAreNotCompressedAndDoNotVary(): void
    {
        foreach (['/data.bin', '/photo.png', '/font.woff2'] as $path) {
            $response = self::get($path, ['Accept-Encoding' => 'gzip, br']);
            self::assertNull(self::header($response, 'Content-Encoding'), $path);
            self::assertNull(self::header($response, 'Vary'), $path);
        }
    }

    public function testASiblingSymlinkedOutOfTheRootIsIgnored(): void
    {
        $response = self::get('/escape.js', ['Accept-Encoding' => 'gzip']);
        self::assertSame(200, $response['status']);
        self::assertNull(self::header($response, 'Content-Encoding'));
        self::assertSame("in root\n", $response['body']);
    }

    public function testHttp10ClientsGetOnTheFlyGzipClosedByTheConnection(): void
    {
        $original = (string) file_get_contents(self::site()->path('style.css'));
        $response = self::request('GET', '/style.css', ['Accept-Encoding' => 'gzip'], '1.0');
        self::assertSame('gzip', self::header($response, 'Content-Encoding'));
        self::assertSame($original, gzdecode($response['body']));
    }
}
