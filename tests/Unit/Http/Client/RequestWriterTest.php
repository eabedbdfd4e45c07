<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Http\Client;

use Kiln\Http\Client\ClientRequest;
use Kiln\Http\Client\Internal\RequestWriter;
use Kiln\Http\Client\Internal\Url;
use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;

final class RequestWriterTest extends TestCase
{
    public function testHeadHasHostDefaultsAndContentLength(): void
    {
        $request = new ClientRequest('POST', 'http://Example.com:8080/a/b?x=1#frag', ['user-agent' => 'mine', 'X-Two' => ['1', '2'], 'Content-Length' => '99'], 'body');
        self::assertSame(
            "POST /a/b?x=1 HTTP/1.1\r\nHost: example.com:8080\r\nuser-agent: mine\r\nX-Two: 1\r\nX-Two: 2\r\nAccept: */*\r\nContent-Length: 4\r\n\r\n",
            RequestWriter::head($request, ['User-Agent' => 'kiln', 'Accept' => '*/*']),
        );
    }

    public function testIterableBodyIsChunkedAndGetHasNoFraming(): void
    {
        $streamed = RequestWriter::head(new ClientRequest('PUT', 'https://h/', [], new \ArrayIterator(['x'])), []);
        self::assertStringEndsWith("Transfer-Encoding: chunked\r\n\r\n", $streamed);
        self::assertSame("GET / HTTP/1.1\r\nHost: h\r\n\r\n", RequestWriter::head(new ClientRequest('GET', 'https://h'), []));
        self::assertSame("a\r\n0123456789\r\n", RequestWriter::chunk('0123456789'));
    }

    /** @return iterable<string, array{0: string, 1: string}> */
    public static function references(): iterable
    {
        yield 'absolute' => ['https://other/x', 'https://other/x'];
        yield 'scheme-relative' => ['//other:81/x', 'http://other:81/x'];
        yield 'absolute path' => ['/y?q', 'http://h:8080/y?q'];
        yield 'relative path' => ['c', 'http://h:8080/a/c'];
        yield 'query only' => ['?z=1', 'http://h:8080/a/b?z=1'];
        yield 'fragment dropped' => ['/p#frag', 'http://h:8080/p'];
    }

    #[DataProvider('references')]
    public function testLocationIsResolvedAgainstTheRequestUrl(string $reference, string $expected): void
    {
        self::assertSame($expected, Url::parse('http://h:8080/a/b?x')->resolve($reference)->toString());
    }

    /** @return iterable<string, array{0: \Closure(): mixed}> */
    public static function misuse(): iterable
    {
        yield 'relative URL' => [static fn() => new ClientRequest('GET', '/path')];
        yield 'ftp scheme' => [static fn() => new ClientRequest('GET', 'ftp://h/')];
        yield 'credentials' => [static fn() => new ClientRequest('GET', 'http://u:p@h/')];
        yield 'space in URL' => [static fn() => new ClientRequest('GET', 'http://h/a b')];
        yield 'method with space' => [static fn() => new ClientRequest('GE T', 'http://h/')];
        yield 'CONNECT' => [static fn() => new ClientRequest('CONNECT', 'http://h/')];
        yield 'CRLF in header value' => [static fn() => new ClientRequest('GET', 'http://h/', ['X' => "a\r\nEvil: 1"])];
        yield 'bad header name' => [static fn() => new ClientRequest('GET', 'http://h/', ['X Y' => 'a'])];
        yield 'zero timeout' => [static fn() => new ClientRequest('GET', 'http://h/', timeout: 0)];
    }

    /** @param \Closure(): mixed $make */
    #[DataProvider('misuse')]
    public function testMisuseIsRefusedAtOnce(\Closure $make): void
    {
        $this->expectException(\ValueError::class);
        $make();
    }
}
