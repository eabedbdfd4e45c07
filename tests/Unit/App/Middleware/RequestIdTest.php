<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\App\Middleware;

use Kiln\App\HttpErrorException;
use Kiln\App\Middleware\RequestId;
use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;

final class RequestIdTest extends TestCase
{
    public function testAValidIncomingIdIsReusedAsAttributeAndResponseHeader(): void
    {
        $next = Requests::next();
        $request = Requests::make(headers: ['X-Request-Id' => 'abc.DEF_123-x']);
        $response = (new RequestId())->process($request, $next);
        self::assertSame('abc.DEF_123-x', $request->attribute('request_id'));
        self::assertSame('abc.DEF_123-x', $response->header('X-Request-Id'));
    }

    /** @return iterable<string, array{string}> */
    public static function invalidIds(): iterable
    {
        yield 'empty' => [''];
        yield 'space' => ['a b'];
        yield 'slash' => ['a/b'];
        yield 'too long' => [str_repeat('a', 129)];
        yield 'non-ascii' => ["\u{e9}t\u{e9}"];
    }

    #[DataProvider('invalidIds')]
    public function testAnInvalidIncomingIdIsReplaced(string $incoming): void
    {
        $request = Requests::make(headers: ['X-Request-Id' => $incoming]);
        $response = (new RequestId())->process($request, Requests::next());
        $id = $request->attribute('request_id');
        self::assertIsString($id);
        self::assertNotSame($incoming, $id);
        self::assertMatchesRegularExpression('/^[0-9a-f]{16}-[0-9a-f]+$/', $id);
        self::assertSame($id, $response->header('X-Request-Id'));
    }

    public function testAnIdOf128CharactersIsAccepted(): void
    {
        $id = str_repeat('a', 128);
        $request = Requests::make(headers: ['X-Request-Id' => $id]);
        (new RequestId())->process($request, Requests::next());
        self::assertSame($id, $request->attribute('request_id'));
    }

    public function testGeneratedIdsAreUniqueAndShareTheWorkerPrefix(): void
    {
        $middleware = new RequestId();
        $ids = [];
        for ($i = 0; $i < 100; $i++) {
            $request = Requests::make();
            $middleware->process($request, Requests::next());
            $ids[] = $request->attribute('request_id');
        }
        self::assertCount(100, array_unique($ids));
        self::assertCount(1, array_unique(array_map(static fn($id): string => explode('-', (string) $id)[0], $ids)));
    }

    public function testTwoInstancesHaveDifferentPrefixes(): void
    {
        $a = Requests::make();
        $b = Requests::make();
        (new RequestId())->process($a, Requests::next());
        (new RequestId())->process($b, Requests::next());
        self::assertNotSame($a->attribute('request_id'), $b->attribute('request_id'));
    }

    public function testTheHeaderNameIsConfigurable(): void
    {
        $request = Requests::make(headers: ['X-Trace' => 'trace-1', 'X-Request-Id' => 'other']);
        $response = (new RequestId(header: 'X-Trace'))->process($request, Requests::next());
        self::assertSame('trace-1', $request->attribute('request_id'));
        self::assertSame('trace-1', $response->header('X-Trace'));
        self::assertNull($response->header('X-Request-Id'));
    }

    public function testAnUntrustedIncomingIdIsIgnored(): void
    {
        $request = Requests::make(headers: ['X-Request-Id' => 'spoofed']);
        (new RequestId(trustIncoming: false))->process($request, Requests::next());
        self::assertNotSame('spoofed', $request->attribute('request_id'));
    }

    public function testABadHeaderNameIsRefusedAtConstruction(): void
    {
        $this->expectException(\ValueError::class);
        new RequestId(header: "X-Id\r\nInjected");
    }

    public function testAnHttpErrorFromTheAppCarriesTheIdAndKeepsItsOwnHeaders(): void
    {
        $next = Requests::next(static fn(): never => throw HttpErrorException::unauthorized('Admin'));
        try {
            (new RequestId())->process(Requests::make(headers: ['X-Request-Id' => 'req-1']), $next);
            self::fail('expected HttpErrorException');
        } catch (HttpErrorException $e) {
            self::assertSame(401, $e->status);
            self::assertSame('req-1', $e->headers['X-Request-Id']);
            self::assertArrayHasKey('WWW-Authenticate', $e->headers);
        }
    }
}
