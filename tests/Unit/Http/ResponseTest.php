<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Http;

use Kiln\Http\Cookie;
use Kiln\Http\HttpException;
use Kiln\Http\Response;
use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;

final class ResponseTest extends TestCase
{
    /** @return iterable<string, array{\Closure(Response): void}> */
    public static function injections(): iterable
    {
        yield 'CRLF in a value' => [static fn(Response $r) => $r->setHeader('X-A', "a\r\nSet-Cookie: evil=1")];
        yield 'LF in a value' => [static fn(Response $r) => $r->setHeader('X-A', "a\nb")];
        yield 'NUL in a value' => [static fn(Response $r) => $r->addHeader('X-A', "a\0b")];
        yield 'CR in one of a list' => [static fn(Response $r) => $r->setHeader('X-A', ['ok', "b\r"])];
        yield 'space in a name' => [static fn(Response $r) => $r->setHeader('X A', 'v')];
        yield 'colon in a name' => [static fn(Response $r) => $r->addHeader('X-A:', 'v')];
        yield 'CRLF in a name' => [static fn(Response $r) => $r->addHeader("X\r\nY", 'v')];
        yield 'empty name' => [static fn(Response $r) => $r->setHeader('', 'v')];
        yield 'constructor headers' => [static fn(Response $r) => new Response(200, ['X-A' => "v\r\n"])];
        yield 'redirect to CRLF' => [static fn(Response $r) => Response::redirect("/x\r\nSet-Cookie: a=b")];
    }

    /** @param \Closure(Response): void $inject */
    #[DataProvider('injections')]
    public function testHeaderInjectionIsRefusedAtSetTime(\Closure $inject): void
    {
        $response = new Response();
        try {
            $inject($response);
            self::fail('accepted');
        } catch (\ValueError) {
        }
        self::assertSame([], $response->headers());
    }

    public function testCookiesAreSeparateSetCookieHeaders(): void
    {
        $response = (new Response())->withCookie('a', '1')->withCookie('b', 'x y', maxAge: 60, secure: true, sameSite: 'Strict');
        $response->setCookie(new Cookie('c', httpOnly: false, sameSite: null));
        $response->deleteCookie('old', '/app');
        self::assertSame([
            'a=1; Path=/; HttpOnly; SameSite=Lax',
            'b=x%20y; Max-Age=60; Path=/; Secure; HttpOnly; SameSite=Strict',
            'c=; Path=/',
            'old=; Expires=Thu, 01 Jan 1970 00:00:00 GMT; Max-Age=0; Path=/app',
        ], $response->headers()['Set-Cookie']);
    }

    public function testFileStreamsWithTypeAndASafeDownloadName(): void
    {
        $path = (string) tempnam(sys_get_temp_dir(), 'kiln-response-test-');
        rename($path, $path . '.csv');
        $path .= '.csv';
        file_put_contents($path, "a,b\n");
        try {
            $response = Response::file($path);
            self::assertSame('text/csv; charset=utf-8', $response->header('Content-Type'));
            self::assertNull($response->header('Content-Disposition'));
            $body = $response->body();
            self::assertIsResource($body);
            self::assertSame("a,b\n", stream_get_contents($body));
            fclose($body);

            $response = Response::file($path, 'application/x-thing', "../réport \"2024\"\r\n.csv");
            self::assertSame('application/x-thing', $response->header('Content-Type'));
            self::assertSame(
                "attachment; filename=\"r_port _2024_.csv\"; filename*=UTF-8''r%C3%A9port%20%222024%22.csv",
                $response->header('Content-Disposition'),
            );
            self::assertSame('attachment; filename="plain.txt"', Response::file($path, null, 'plain.txt')->header('Content-Disposition'));
        } finally {
            unlink($path);
        }
    }

    public function testAMissingFileThrows(): void
    {
        $this->expectException(HttpException::class);
        Response::file('/no/such/file');
    }

    public function testHelpersKeepWorking(): void
    {
        self::assertSame('text/html; charset=utf-8', Response::html('<p>')->header('content-type'));
        self::assertSame('hi', Response::text('hi', 201)->body());
        self::assertSame('{"a":"/é"}', Response::json(['a' => '/é'])->body());
        self::assertSame("{\n    \"a\": 1\n}", Response::json(['a' => 1], 200, JSON_PRETTY_PRINT)->body());
        $redirect = Response::redirect('/there', 303);
        self::assertSame([303, '/there'], [$redirect->status(), $redirect->header('Location')]);
        $response = new Response(200, ['X-A' => ['1', '2']]);
        self::assertSame(['X-A' => ['1', '2']], $response->wireHeaders());
    }

    public function testDeclaredLengthIsAPlainNumberTheHandlerSet(): void
    {
        self::assertNull((new Response(200, [], 'abc'))->declaredLength());
        self::assertSame(11, (new Response(200, ['Content-Length' => '11']))->declaredLength());
        self::assertSame(0, (new Response(200, ['content-length' => ' 0 ']))->declaredLength());
        self::assertSame(7, (new Response(200, ['Content-Length' => ['7', '7']]))->declaredLength());
        foreach (['', '-1', '1e3', '0x10', '12 34', '1234567890123456789'] as $bad) {
            self::assertNull((new Response(200, ['Content-Length' => $bad]))->declaredLength(), "'$bad'");
        }
        self::assertNull((new Response(200, ['Content-Length' => ['7', '8']]))->declaredLength(), 'copies that disagree');
    }
}
