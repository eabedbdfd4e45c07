<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\App\Middleware;

use Kiln\App\Middleware\Compression;
use Kiln\App\Middleware\ConditionalGet;
use Kiln\Http\Request;
use Kiln\Http\RequestHandler;
use Kiln\Http\Response;
use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;

final class ConditionalGetTest extends TestCase
{
    private static function etagOf(string $body): string
    {
        return '"' . hash('xxh3', $body) . '"';
    }

    /** @param array<string, string> $headers */
    private static function conditional(array $headers, ?Response $response = null, string $method = 'GET'): Response
    {
        $next = Requests::returning($response ?? Response::text('hello'));
        return (new ConditionalGet())->process(Requests::make($method, '/', $headers), $next);
    }

    public function testA200GetsAStrongEtagOfItsBody(): void
    {
        $response = self::conditional([]);
        self::assertSame(200, $response->status());
        self::assertSame(self::etagOf('hello'), $response->header('ETag'));
        self::assertSame('hello', $response->body());
    }

    /** @return iterable<string, array{string}> */
    public static function matchingLists(): iterable
    {
        $tag = self::etagOf('hello');
        yield 'exact' => [$tag];
        yield 'weak form matches strong tag' => ['W/' . $tag];
        yield 'in a list' => ['"a", ' . $tag . ', "b"'];
        yield 'star' => ['*'];
        yield 'no spaces' => ['"a",' . $tag];
    }

    #[DataProvider('matchingLists')]
    public function testAMatchingIfNoneMatchGives304WithEtagAndNoBody(string $ifNoneMatch): void
    {
        $response = self::conditional(['If-None-Match' => $ifNoneMatch]);
        self::assertSame(304, $response->status());
        self::assertSame('', $response->body());
        self::assertSame(self::etagOf('hello'), $response->header('ETag'));
        self::assertNull($response->header('Content-Type'));
    }

    public function testANonMatchingIfNoneMatchGives200(): void
    {
        $response = self::conditional(['If-None-Match' => '"other", W/"another"']);
        self::assertSame(200, $response->status());
        self::assertSame('hello', $response->body());
    }

    public function testRepeatedIfNoneMatchFieldsAreOneList(): void
    {
        self::assertSame(304, self::conditional(['If-None-Match' => ['"a"', self::etagOf('hello')]])->status());
    }

    public function testAnEtagSetByTheAppIsKeptAndCompared(): void
    {
        $app = Response::text('hello');
        $app->setHeader('ETag', 'W/"v7"');
        self::assertSame('W/"v7"', self::conditional([], clone $app)->header('ETag'));
        self::assertSame(304, self::conditional(['If-None-Match' => '"v7"'], clone $app)->status());
    }

    public function testHeadIsTreatedAsGet(): void
    {
        self::assertSame(304, self::conditional(['If-None-Match' => '*'], null, 'HEAD')->status());
    }

    public function testOtherMethodsAndStatusesAreUntouched(): void
    {
        $post = self::conditional(['If-None-Match' => '*'], null, 'POST');
        self::assertSame(200, $post->status());
        self::assertNull($post->header('ETag'));
        $notFound = self::conditional(['If-None-Match' => '*'], Response::text('missing', 404));
        self::assertSame(404, $notFound->status());
        self::assertNull($notFound->header('ETag'));
    }

    public function testAStreamedBodyPassesThroughUntouched(): void
    {
        $chunks = (static function (): \Generator {
            yield 'a';
            yield 'b';
        })();
        $app = new Response(200, ['Content-Type' => 'text/plain'], $chunks);
        $response = self::conditional(['If-None-Match' => '*'], $app);
        self::assertSame(200, $response->status());
        self::assertSame($chunks, $response->body());
        self::assertNull($response->header('ETag'));
    }

    public function testIfModifiedSinceAtOrAfterLastModifiedGives304(): void
    {
        $app = static function (): Response {
            $response = Response::text('hello');
            $response->setHeader('Last-Modified', 'Thu, 01 Jan 2026 00:00:00 GMT');
            return $response;
        };
        self::assertSame(304, self::conditional(['If-Modified-Since' => 'Thu, 01 Jan 2026 00:00:00 GMT'], $app())->status());
        self::assertSame(304, self::conditional(['If-Modified-Since' => 'Fri, 02 Jan 2026 00:00:00 GMT'], $app())->status());
        self::assertSame(200, self::conditional(['If-Modified-Since' => 'Wed, 31 Dec 2025 23:59:59 GMT'], $app())->status());
        self::assertSame(200, self::conditional(['If-Modified-Since' => 'not a date'], $app())->status());
    }

    public function testIfNoneMatchTakesPrecedenceOverIfModifiedSince(): void
    {
        $app = Response::text('hello');
        $app->setHeader('Last-Modified', 'Thu, 01 Jan 2026 00:00:00 GMT');
        $response = self::conditional(['If-None-Match' => '"stale"', 'If-Modified-Since' => 'Fri, 02 Jan 2026 00:00:00 GMT'], $app);
        self::assertSame(200, $response->status());
    }

    public function testIfModifiedSinceWithoutLastModifiedGives200(): void
    {
        self::assertSame(200, self::conditional(['If-Modified-Since' => 'Fri, 02 Jan 2026 00:00:00 GMT'])->status());
    }

    public function testInsideCompressionTheWeakenedEtagStillValidates(): void
    {
        $body = str_repeat('hello ', 500);
        $inner = new class ($body) implements RequestHandler {
            public function __construct(private readonly string $body) {}

            public function handle(Request $request): Response
            {
                return (new ConditionalGet())->process($request, Requests::returning(Response::text($this->body)));
            }
        };
        $first = (new Compression())->process(Requests::make(headers: ['Accept-Encoding' => 'gzip']), $inner);
        self::assertSame('W/' . self::etagOf($body), $first->header('ETag'));
        $headers = ['Accept-Encoding' => 'gzip', 'If-None-Match' => (string) $first->header('ETag')];
        $second = (new Compression())->process(Requests::make(headers: $headers), $inner);
        self::assertSame(304, $second->status());
        self::assertSame('', $second->body());
        self::assertNull($second->header('Content-Encoding'));
    }
}
