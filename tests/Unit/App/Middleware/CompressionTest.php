<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\App\Middleware;

use Kiln\App\Middleware\Compression;
use Kiln\Http\Response;
use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;

final class CompressionTest extends TestCase
{
    private static function compress(Response $app, string $acceptEncoding = 'gzip, deflate, br', ?Compression $compression = null): Response
    {
        $request = Requests::make(headers: $acceptEncoding === '' ? [] : ['Accept-Encoding' => $acceptEncoding]);
        return ($compression ?? new Compression())->process($request, Requests::returning($app));
    }

    public function testABodyAboveTheThresholdIsGzipped(): void
    {
        $body = str_repeat('hello world ', 200);
        $app = Response::text($body);
        $app->setHeader('Content-Length', (string) \strlen($body));
        $response = self::compress($app);
        self::assertSame('gzip', $response->header('Content-Encoding'));
        self::assertSame('Accept-Encoding', $response->header('Vary'));
        self::assertNull($response->header('Content-Length'));
        self::assertIsString($response->body());
        self::assertSame($body, gzdecode($response->body()));
    }

    public function testABodyExactlyAtTheThresholdIsGzipped(): void
    {
        self::assertSame('gzip', self::compress(Response::text(str_repeat('a', 1024)))->header('Content-Encoding'));
    }

    public function testABodyBelowTheThresholdIsLeftAlone(): void
    {
        $response = self::compress(Response::text(str_repeat('a', 1023)));
        self::assertNull($response->header('Content-Encoding'));
        self::assertNull($response->header('Vary'));
        self::assertSame(str_repeat('a', 1023), $response->body());
    }

    /** @return iterable<string, array{string, bool}> */
    public static function acceptEncodings(): iterable
    {
        yield 'plain gzip' => ['gzip', true];
        yield 'gzip with q' => ['br;q=1.0, gzip;q=0.5', true];
        yield 'gzip q=0' => ['gzip;q=0', false];
        yield 'gzip q=0.000' => ['gzip; q=0.000, identity', false];
        yield 'star' => ['*', true];
        yield 'star but gzip refused' => ['*, gzip;q=0', false];
        yield 'star q=0' => ['*;q=0', false];
        yield 'identity only' => ['identity', false];
        yield 'br only' => ['br', false];
        yield 'upper case' => ['GZIP', true];
        yield 'x-gzip' => ['x-gzip', true];
        yield 'no header' => ['', false];
    }

    #[DataProvider('acceptEncodings')]
    public function testAcceptEncodingDecides(string $acceptEncoding, bool $gzipped): void
    {
        $response = self::compress(Response::text(str_repeat('a', 2000)), $acceptEncoding);
        self::assertSame($gzipped ? 'gzip' : null, $response->header('Content-Encoding'));
        self::assertSame('Accept-Encoding', $response->header('Vary'));
    }

    public function testANonCompressibleTypeIsLeftAlone(): void
    {
        $response = self::compress(new Response(200, ['Content-Type' => 'image/png'], str_repeat("\x89", 4096)));
        self::assertNull($response->header('Content-Encoding'));
        self::assertNull($response->header('Vary'));
    }

    public function testStructuredSuffixesAndConfiguredTypesCount(): void
    {
        $body = str_repeat('{}', 1000);
        self::assertSame('gzip', self::compress(new Response(200, ['Content-Type' => 'application/problem+json'], $body))->header('Content-Encoding'));
        $custom = new Compression(types: ['application/x-custom']);
        self::assertSame('gzip', self::compress(new Response(200, ['Content-Type' => 'application/x-custom'], $body), 'gzip', $custom)->header('Content-Encoding'));
        self::assertNull(self::compress(Response::text($body), 'gzip', $custom)->header('Content-Encoding'));
    }

    public function testAnAlreadyEncodedBodyOrNoTransformIsLeftAlone(): void
    {
        $encoded = new Response(200, ['Content-Type' => 'text/plain', 'Content-Encoding' => 'br'], str_repeat('a', 2000));
        self::assertSame('br', self::compress($encoded)->header('Content-Encoding'));
        $noTransform = new Response(200, ['Content-Type' => 'text/plain', 'Cache-Control' => 'no-transform'], str_repeat('a', 2000));
        self::assertNull(self::compress($noTransform)->header('Content-Encoding'));
    }

    public function testBodilessStatusesAreLeftAlone(): void
    {
        foreach ([204, 304] as $status) {
            $response = self::compress(new Response($status, ['Content-Type' => 'text/plain'], str_repeat('a', 2000)));
            self::assertNull($response->header('Content-Encoding'), "status $status");
        }
    }

    public function testAStrongEtagBecomesWeak(): void
    {
        $app = Response::text(str_repeat('a', 2000));
        $app->setHeader('ETag', '"abc"');
        self::assertSame('W/"abc"', self::compress($app)->header('ETag'));
        $weak = Response::text(str_repeat('a', 2000));
        $weak->setHeader('ETag', 'W/"abc"');
        self::assertSame('W/"abc"', self::compress($weak)->header('ETag'));
    }

    public function testAStreamedBodyIsGzippedChunkByChunk(): void
    {
        $produced = 0;
        $chunks = (static function () use (&$produced): \Generator {
            for ($i = 0; $i < 5; $i++) {
                $produced++;
                yield "event $i " . str_repeat('x', 100) . "\n";
            }
        })();
        $response = self::compress(new Response(200, ['Content-Type' => 'text/event-stream'], $chunks));
        self::assertSame('gzip', $response->header('Content-Encoding'));
        self::assertSame(0, $produced, 'nothing is produced before the body is iterated');
        $body = $response->body();
        self::assertInstanceOf(\Generator::class, $body);
        $pieces = [];
        foreach ($body as $piece) {
            $pieces[] = $piece;
            if (\count($pieces) === 1) {
                self::assertSame(1, $produced, 'the first compressed piece comes after the first chunk only');
            }
        }
        self::assertGreaterThan(1, \count($pieces));
        $expected = '';
        for ($i = 0; $i < 5; $i++) {
            $expected .= "event $i " . str_repeat('x', 100) . "\n";
        }
        self::assertSame($expected, gzdecode(implode('', $pieces)));
    }

    public function testAStreamedPieceDecodesOnItsOwnAfterASyncFlush(): void
    {
        $chunks = (static function (): \Generator {
            yield 'first';
            yield 'second';
        })();
        $body = self::compress(new Response(200, ['Content-Type' => 'text/plain'], $chunks))->body();
        self::assertInstanceOf(\Generator::class, $body);
        $inflate = inflate_init(ZLIB_ENCODING_GZIP);
        self::assertNotFalse($inflate);
        self::assertSame('first', inflate_add($inflate, (string) $body->current(), ZLIB_SYNC_FLUSH));
    }

    public function testAResourceBodyIsReadInPiecesAndGzipped(): void
    {
        $data = random_bytes(100_000) . str_repeat('text', 50_000);
        $stream = fopen('php://temp', 'w+b');
        self::assertIsResource($stream);
        fwrite($stream, $data);
        rewind($stream);
        $response = self::compress(new Response(200, ['Content-Type' => 'application/json', 'Content-Length' => (string) \strlen($data)], $stream));
        self::assertNull($response->header('Content-Length'));
        $body = $response->body();
        self::assertInstanceOf(\Generator::class, $body);
        $pieces = iterator_to_array($body, false);
        self::assertGreaterThan(2, \count($pieces));
        self::assertSame($data, gzdecode(implode('', $pieces)));
        self::assertFalse(\is_resource($stream), 'the stream is closed when done');
    }

    public function testASmallFileBodyIsLeftAlone(): void
    {
        $stream = fopen('php://memory', 'w+b');
        self::assertIsResource($stream);
        fwrite($stream, 'tiny');
        rewind($stream);
        $response = self::compress(new Response(200, ['Content-Type' => 'text/plain', 'Content-Length' => '4'], $stream));
        self::assertSame($stream, $response->body());
        self::assertNull($response->header('Content-Encoding'));
    }

    public function testBadConfigurationIsRefusedAtConstruction(): void
    {
        foreach ([['minLength' => -1], ['level' => 10], ['level' => 0], ['types' => ['Text/HTML']], ['types' => ['json']]] as $args) {
            try {
                new Compression(...$args);
                self::fail('expected ValueError for ' . json_encode($args));
            } catch (\ValueError) {
                self::addToAssertionCount(1);
            }
        }
    }
}
