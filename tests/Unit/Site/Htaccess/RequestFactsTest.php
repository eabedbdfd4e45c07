<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Site\Htaccess;

use Kiln\Http\Limits;
use Kiln\Http\Request;
use Kiln\Http\Wire\RequestHead;
use Kiln\Http\Wire\RequestParser;
use Kiln\Site\Htaccess\RequestFacts;
use PHPUnit\Framework\TestCase;

final class RequestFactsTest extends TestCase
{
    public function testAKilnRequestBecomesFacts(): void
    {
        $parser = new RequestParser(new Limits());
        $parser->feed("GET /caf%C3%A9/x?a=1&b=2 HTTP/1.1\r\nHost: example.com:8080\r\nCookie: a=1\r\nCookie: b=2\r\nX-Many: 1\r\nX-Many: 2\r\n\r\n");
        $head = $parser->next();
        self::assertInstanceOf(RequestHead::class, $head);
        $facts = RequestFacts::fromRequest(new Request($head, '', null, '192.0.2.7', 51234, '127.0.0.2', 8080));
        self::assertSame('GET', $facts->method);
        self::assertSame('/caf%C3%A9/x', $facts->path);
        self::assertSame('a=1&b=2', $facts->query);
        self::assertSame('example.com:8080', $facts->host());
        self::assertSame('example.com', $facts->serverName());
        self::assertSame('a=1; b=2', $facts->header('Cookie'));
        self::assertSame('1, 2', $facts->header('x-many'));
        self::assertSame('192.0.2.7', $facts->remoteAddress);
        self::assertSame(51234, $facts->remotePort);
        self::assertSame(8080, $facts->serverPort);
        self::assertFalse($facts->https);
        self::assertSame('GET /caf%C3%A9/x?a=1&b=2 HTTP/1.1', $facts->theRequest());
    }

    public function testWithoutAHostTheServerNameIsTheLocalAddress(): void
    {
        $facts = new RequestFacts('GET', '/', serverAddress: '10.0.0.1');
        self::assertSame('10.0.0.1', $facts->serverName());
        self::assertSame('GET / HTTP/1.1', $facts->theRequest());
        self::assertSame('http', $facts->scheme());
    }
}
