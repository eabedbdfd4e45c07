<?php

declare(strict_types=1);

namespace Kiln\Tests\Conformance\Static;

/** StaticOptions on the wire: Cache-Control rules, index names, compression switched off. */
final class OptionsTest extends StaticTestCase
{
    protected static function appCode(): string
    {
        return <<<'PHP'
            use Kiln\Http\StaticFiles;
            use Kiln\Http\Static\CachePolicy;
            use Kiln\Http\Static\StaticOptions;

            file_put_contents("$root/sub/home.htm", "<p>home</p>\n");
            return new StaticFiles($root, new StaticOptions(
                cache: CachePolicy::none()
                    ->withPrefix('/sub/', 'public, max-age=31536000, immutable')
                    ->withExtensions(['png', 'woff2'], 'public, max-age=86400')
                    ->withExtensions(['html'], 'no-store')
                    ->withPrefix('/', 'no-cache'),
                index: ['home.htm', 'index.html'],
                maxRanges: 2,
                precompressed: false,
                gzip: false,
            ));
            PHP;
    }

    public function testCacheControlFollowsTheFirstMatchingRule(): void
    {
        self::assertSame('public, max-age=31536000, immutable', self::header(self::get('/sub/page.html'), 'Cache-Control'));
        self::assertSame('public, max-age=86400', self::header(self::get('/photo.png'), 'Cache-Control'));
        self::assertSame('no-cache', self::header(self::get('/hello.txt'), 'Cache-Control'));
        self::assertSame('no-store', self::header(self::get('/'), 'Cache-Control'), 'the index file\'s extension counts');
    }

    public function testCacheControlIsRepeatedOnA304(): void
    {
        $etag = (string) self::header(self::get('/photo.png'), 'ETag');
        $response = self::get('/photo.png', ['If-None-Match' => $etag]);
        self::assertSame(304, $response['status']);
        self::assertSame('public, max-age=86400', self::header($response, 'Cache-Control'));
    }

    public function testIndexNamesAreTriedInOrder(): void
    {
        self::assertSame("<p>home</p>\n", self::get('/sub/')['body']);
        self::assertSame("<h1>index</h1>\n", self::get('/')['body']);
    }

    public function testCompressionSwitchedOffSendsIdentityWithoutVary(): void
    {
        foreach (['/app.js', '/style.css'] as $path) {
            $response = self::get($path, ['Accept-Encoding' => 'gzip, br']);
            self::assertNull(self::header($response, 'Content-Encoding'), $path);
            self::assertNull(self::header($response, 'Vary'), $path);
            self::assertSame(file_get_contents(self::site()->path($path)), $response['body']);
        }
    }

    public function testTheRangeLimitIsConfigurable(): void
    {
        self::assertSame(206, self::get('/data.bin', ['Range' => 'bytes=0-1,10-11'])['status']);
        self::assertSame(200, self::get('/data.bin', ['Range' => 'bytes=0-1,10-11,20-21'])['status']);
    }
}
