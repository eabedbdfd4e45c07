<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\App\Handler;

use Kiln\App\Handler\ResultConverter;
use Kiln\App\Result;
use Kiln\Http\Response;
use PHPUnit\Framework\Attributes\DataProvider;

final class ResultContractTest extends InvokerTestCase
{
    /** @return iterable<string, array{mixed, int, ?string, string}> */
    public static function contract(): iterable
    {
        $json = new class implements \JsonSerializable {
            public function jsonSerialize(): mixed
            {
                return ['url' => 'https://x/é'];
            }
        };
        $html = 'text/html; charset=utf-8';
        yield 'string' => ['<p>hi</p>', 200, $html, '<p>hi</p>'];
        yield 'empty string' => ['', 200, $html, ''];
        yield 'array' => [['a' => 1, 'path' => '/x/é'], 200, 'application/json', '{"a":1,"path":"/x/é"}'];
        yield 'list' => [[1, 2], 200, 'application/json', '[1,2]'];
        yield 'JsonSerializable' => [$json, 200, 'application/json', '{"url":"https://x/é"}'];
        yield 'int 404' => [404, 404, 'text/plain; charset=utf-8', "404 Not Found\n"];
        yield 'int 201' => [201, 201, 'text/plain; charset=utf-8', "201 Created\n"];
        yield 'int 204' => [204, 204, null, ''];
        yield 'int 304' => [304, 304, null, ''];
        yield 'Response' => [Response::text('t', 202), 202, 'text/plain; charset=utf-8', 't'];
        yield 'null' => [null, 204, null, ''];
        yield 'Generator' => [(static function () {
            yield 'a';
            yield 1;
            yield 1.5;
            yield true;
            yield new class implements \Stringable {
                public function __toString(): string
                {
                    return 's';
                }
            };
        })(), 200, $html, 'a11.51s'];
        yield 'IteratorAggregate' => [new \ArrayObject(['x', 'y']), 200, $html, 'xy'];
    }

    #[DataProvider('contract')]
    public function testAReturnedValueBecomesAResponse(mixed $returned, int $status, ?string $type, string $body): void
    {
        $response = $this->invoke(static fn() => $returned);

        self::assertSame($status, $response->status());
        self::assertSame($type, $response->header('Content-Type'));
        self::assertSame($body, self::body($response));
    }

    public function testAReturnedResponseIsSentAsItIs(): void
    {
        $response = Response::redirect('/there');
        self::assertSame($response, $this->invoke(static fn() => $response));
    }

    public function testAnUnsupportedReturnTypeIsATypeErrorListingWhatIsAllowed(): void
    {
        $this->expectException(\TypeError::class);
        $this->expectExceptionMessageMatches('/returned float; return a string .*an array .*an int .*a Response, a Generator .*null/');
        $this->invoke(static fn() => 1.5);
    }

    public function testAnUnsupportedObjectIsATypeErrorNamingItsClass(): void
    {
        $this->expectException(\TypeError::class);
        $this->expectExceptionMessage('returned stdClass');
        $this->invoke(static fn() => new \stdClass());
    }

    public function testAStreamedItemOfTheWrongTypeIsATypeErrorNamingTheType(): void
    {
        $items = static function (): \Generator {
            yield 'ok';
            yield ['not', 'a', 'string'];
        };
        $response = $this->invoke(static fn(): \Generator => $items());

        $this->expectException(\TypeError::class);
        $this->expectExceptionMessage('A streamed body yielded array; yield strings');
        self::body($response);
    }

    public function testJsonThatCannotBeEncodedThrows(): void
    {
        $this->expectException(\JsonException::class);
        $this->invoke(static fn() => ['bad' => "\xB1\x31"]);
    }

    public function testResultDelegatesToTheConverter(): void
    {
        self::assertSame("405 Method Not Allowed\n", Result::status(405)->body());
        self::assertSame('x', Result::toResponse('x')->body());
        self::assertSame(204, ResultConverter::status(204)->status());
        self::assertSame('', ResultConverter::status(204)->body());
    }

    public function testAStringOrArrayResultIsTheResponseThatResponseHtmlOrJsonMakes(): void
    {
        $data = ['path' => '/a/b', 'name' => 'é', 'ratio' => 0.1, 'whole' => 2.0, 'list' => [1, null, true]];
        foreach ([['<p>hi</p>', Response::html('<p>hi</p>')], [$data, Response::json($data)]] as [$returned, $expected]) {
            $response = $this->invoke(static fn() => $returned);

            self::assertSame($expected->status(), $response->status());
            self::assertSame($expected->headers(), $response->headers());
            self::assertSame($expected->body(), $response->body());
        }
    }

    public function testChangingOneConvertedResponseLeavesTheNextOneUntouched(): void
    {
        foreach ([static fn() => 'x', static fn() => ['x' => 1]] as $handler) {
            $first = $this->invoke($handler);
            $type = $first->header('Content-Type');
            $first->setStatus(500);
            $first->setHeader('Content-Type', 'text/plain');
            $first->addHeader('X-Extra', 'one');
            $first->setBody('changed');

            $next = $this->invoke($handler);

            self::assertNotSame($first, $next);
            self::assertSame(200, $next->status());
            self::assertSame(['Content-Type' => [(string) $type]], $next->headers());
            self::assertNotSame('changed', $next->body());
        }
    }
}
