<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Http\Internal;

use Kiln\Http\Internal\UnstartedRequests;
use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;

final class UnstartedRequestsTest extends TestCase
{
    /** @return iterable<string, array{string, string|null}> */
    public static function firstBytes(): iterable
    {
        yield 'a GET' => ["GET / HTTP/1.1\r\nHost: a\r\n\r\n", 'GET'];
        yield 'a POST' => ['POST /form HTTP/1.1', 'POST'];
        yield 'after empty lines' => ["\r\n\r\nPUT /f HTTP/1.1", 'PUT'];
        yield 'the request line cut after its method' => ['DELETE ', 'DELETE'];
        yield 'the method not all there' => ['GE', null];
        yield 'empty lines only' => ["\r\n", null];
        yield 'nothing' => ['', null];
        yield 'a space first' => [' GET / HTTP/1.1', ''];
        yield 'lower case, as sent' => ['get / HTTP/1.1', 'get'];
    }

    #[DataProvider('firstBytes')]
    public function testTheMethodIsTheRequestLinesFirstWord(string $bytes, ?string $method): void
    {
        self::assertSame($method, UnstartedRequests::method($bytes));
    }
}
