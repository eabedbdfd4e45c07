<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Http\Static;

use Kiln\Http\Body\FileResponse;
use Kiln\Http\Static\MimeTypes;
use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;

final class MimeTypesTest extends TestCase
{
    /** @return iterable<string, array{string, string}> */
    public static function types(): iterable
    {
        yield 'html' => ['index.html', 'text/html; charset=utf-8'];
        yield 'upper-case extension' => ['INDEX.HTM', 'text/html; charset=utf-8'];
        yield 'css' => ['a/b/style.css', 'text/css; charset=utf-8'];
        yield 'javascript (RFC 9239)' => ['app.js', 'text/javascript; charset=utf-8'];
        yield 'module' => ['app.mjs', 'text/javascript; charset=utf-8'];
        yield 'json gets a charset' => ['data.json', 'application/json; charset=utf-8'];
        yield 'source map' => ['app.js.map', 'application/json; charset=utf-8'];
        yield 'web manifest' => ['site.webmanifest', 'application/manifest+json; charset=utf-8'];
        yield 'xml keeps its own declaration' => ['feed.xml', 'application/xml'];
        yield 'svg keeps its own declaration' => ['logo.svg', 'image/svg+xml'];
        yield 'plain text' => ['README.txt', 'text/plain; charset=utf-8'];
        yield 'csv' => ['t.csv', 'text/csv; charset=utf-8'];
        yield 'png' => ['a.png', 'image/png'];
        yield 'jpeg' => ['a.jpeg', 'image/jpeg'];
        yield 'avif' => ['a.avif', 'image/avif'];
        yield 'webp' => ['a.webp', 'image/webp'];
        yield 'icon' => ['favicon.ico', 'image/x-icon'];
        yield 'woff2' => ['f.woff2', 'font/woff2'];
        yield 'wasm' => ['m.wasm', 'application/wasm'];
        yield 'pdf' => ['doc.pdf', 'application/pdf'];
        yield 'mp4' => ['v.mp4', 'video/mp4'];
        yield 'webm' => ['v.webm', 'video/webm'];
        yield 'mp3' => ['a.mp3', 'audio/mpeg'];
        yield 'tarball is gzip by its last extension' => ['x.tar.gz', 'application/gzip'];
        yield 'docx' => ['d.docx', 'application/vnd.openxmlformats-officedocument.wordprocessingml.document'];
        yield 'unknown' => ['file.unknownext', 'application/octet-stream'];
        yield 'no extension' => ['Makefile', 'application/octet-stream'];
        yield 'dot in a directory only' => ['dir.d/file', 'application/octet-stream'];
        yield 'trailing dot' => ['file.', 'application/octet-stream'];
    }

    #[DataProvider('types')]
    public function testTheContentTypeFollowsTheExtension(string $path, string $type): void
    {
        self::assertSame($type, MimeTypes::forPath($path));
    }

    public function testTheMapIsLargeAndWellFormed(): void
    {
        $all = MimeTypes::all();
        self::assertGreaterThan(300, \count($all));
        foreach ($all as $extension => $type) {
            self::assertMatchesRegularExpression('~^[a-z0-9][a-z0-9-]*$~', $extension);
            self::assertMatchesRegularExpression('~^[a-z]+/[a-z0-9][a-z0-9.+-]*$~i', $type, $extension);
        }
    }

    public function testEveryTextTypeAndNoBinaryTypeCarriesACharset(): void
    {
        foreach (array_keys(MimeTypes::all()) as $extension) {
            $type = MimeTypes::forExtension($extension);
            $text = str_starts_with($type, 'text/') || str_contains($type, 'json');
            self::assertSame($text, str_ends_with($type, '; charset=utf-8'), $extension);
        }
    }

    public function testCompressibleTypesAreTextualOnes(): void
    {
        foreach (['text/html; charset=utf-8', 'text/css', 'text/javascript', 'application/json', 'image/svg+xml',
            'application/xml', 'application/wasm', 'application/ld+json', 'font/ttf', 'image/x-icon'] as $type) {
            self::assertTrue(MimeTypes::isCompressible($type), $type);
        }
        foreach (['image/png', 'image/jpeg', 'video/mp4', 'font/woff2', 'application/zip', 'application/gzip',
            'application/octet-stream', 'application/pdf'] as $type) {
            self::assertFalse(MimeTypes::isCompressible($type), $type);
        }
    }

    public function testResponseFileUsesTheSameMap(): void
    {
        foreach (['a.css', 'a.json', 'a.woff', 'a.xyz'] as $name) {
            self::assertSame(MimeTypes::forPath($name), FileResponse::contentType($name));
        }
    }
}
