<?php

declare(strict_types=1);

namespace Kiln\Tests\Conformance\Static;

/**
 * StaticFiles::serveFile(), the entry a document-root layer uses once it resolved a path itself: the
 * handler here maps /any/thing to a file named by ?file= (as a resolver would), and serveFile() applies
 * every header rule, and still refuses what is outside the root or hidden. With ?post=1 it serves POST as a
 * document root asks it to.
 */
final class ServeFileTest extends StaticTestCase
{
    protected static function appCode(): string
    {
        return <<<'PHP'
            use Kiln\Http\Request;
            use Kiln\Http\RequestHandler;
            use Kiln\Http\Response;
            use Kiln\Http\StaticFiles;

            return new class (new StaticFiles($root), $root) implements RequestHandler {
                public function __construct(private readonly StaticFiles $files, private readonly string $root) {}

                public function handle(Request $request): Response
                {
                    $file = (string) ($request->query()['file'] ?? '');
                    $real = str_starts_with($file, '/') ? $file : realpath("{$this->root}/$file");
                    return $this->files->serveFile($request, (string) $real, post: isset($request->query()['post']));
                }
            };
            PHP;
    }

    public function testAResolvedFileGetsEveryHeaderRule(): void
    {
        $response = self::get('/pretty/url?file=data.bin', ['Range' => 'bytes=0-9']);
        self::assertSame(206, $response['status']);
        self::assertSame('bytes 0-9/100000', self::header($response, 'Content-Range'));
        self::assertSame(substr(StaticSite::bytes(100_000), 0, 10), $response['body']);
        $gzip = self::get('/pretty?file=app.js', ['Accept-Encoding' => 'gzip']);
        self::assertSame('gzip', self::header($gzip, 'Content-Encoding'));
        self::assertSame('text/javascript; charset=utf-8', self::header($gzip, 'Content-Type'));
        $etag = (string) self::header(self::get('/x?file=hello.txt'), 'ETag');
        self::assertSame(304, self::get('/x?file=hello.txt', ['If-None-Match' => $etag])['status']);
        self::assertSame(405, self::request('POST', '/x?file=hello.txt', ['Content-Length' => '0'])['status']);
    }

    public function testPostWhenAskedForIsServedAsGetWithoutRangesAndWithItsPreconditions(): void
    {
        $posted = self::request('POST', '/x?file=hello.txt&post=1', ['Content-Length' => '0']);
        self::assertSame(200, $posted['status']);
        self::assertSame(self::get('/x?file=hello.txt')['body'], $posted['body']);
        $ranged = self::request('POST', '/x?file=data.bin&post=1', ['Content-Length' => '0', 'Range' => 'bytes=0-9']);
        self::assertSame([200, 100_000], [$ranged['status'], \strlen($ranged['body'])], 'ranges are defined for GET only');
        $etag = (string) self::header(self::get('/x?file=hello.txt'), 'ETag');
        self::assertSame(412, self::request('POST', '/x?file=hello.txt&post=1', ['Content-Length' => '0', 'If-None-Match' => $etag])['status']);
        $put = self::request('PUT', '/x?file=hello.txt&post=1', ['Content-Length' => '0']);
        self::assertSame([405, 'GET, HEAD, POST'], [$put['status'], self::header($put, 'Allow')]);
    }

    public function testFilesOutsideTheRootHiddenOrSourcesAreStillRefused(): void
    {
        $site = self::site();
        self::assertSame(404, self::get('/x?file=' . rawurlencode($site->dir . '/outside/secret.txt'))['status']);
        self::assertSame(404, self::get('/x?file=' . rawurlencode('/etc/passwd'))['status']);
        self::assertSame(404, self::get('/x?file=.env')['status']);
        self::assertSame(403, self::get('/x?file=page.php')['status']);
        self::assertSame(404, self::get('/x?file=sub')['status'], 'a directory is not a regular file');
    }
}
