<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Http;

use Kiln\Http\Cookie;
use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;

final class CookieTest extends TestCase
{
    public function testDefaultsAreSafe(): void
    {
        self::assertSame('sid=a%20b%3Bc; Path=/; HttpOnly; SameSite=Lax', (new Cookie('sid', 'a b;c'))->headerValue());
    }

    public function testEveryAttributeIsWritten(): void
    {
        $cookie = new Cookie('id', 'v', new \DateTimeImmutable('2030-01-02 03:04:05', new \DateTimeZone('Europe/Paris')), 3600, '/app', 'example.com', true, false, 'none', true);
        self::assertSame(
            'id=v; Expires=Wed, 02 Jan 2030 02:04:05 GMT; Max-Age=3600; Path=/app; Domain=example.com; Secure; SameSite=None; Partitioned',
            $cookie->headerValue(),
        );
        self::assertSame('a=; Expires=Thu, 01 Jan 1970 00:00:00 GMT; Max-Age=0; Path=/', Cookie::expired('a')->headerValue());
    }

    /** @return iterable<string, array{\Closure(): Cookie}> */
    public static function invalid(): iterable
    {
        yield 'name with space' => [static fn() => new Cookie('a b')];
        yield 'name with =' => [static fn() => new Cookie('a=b')];
        yield 'empty name' => [static fn() => new Cookie('')];
        yield 'name with CR LF' => [static fn() => new Cookie("a\r\nX-Evil: 1")];
        yield 'SameSite=None without Secure' => [static fn() => new Cookie('a', sameSite: 'None')];
        yield 'Partitioned without Secure' => [static fn() => new Cookie('a', secure: false, partitioned: true)];
        yield 'unknown SameSite' => [static fn() => new Cookie('a', sameSite: 'Sometimes')];
        yield '__Secure- without Secure' => [static fn() => new Cookie('__Secure-a')];
        yield '__Host- with a domain' => [static fn() => new Cookie('__Host-a', secure: true, domain: 'example.com')];
        yield 'path with ;' => [static fn() => new Cookie('a', path: '/; Domain=evil')];
        yield 'domain with LF' => [static fn() => new Cookie('a', domain: "x\n")];
    }

    /** @param \Closure(): Cookie $make */
    #[DataProvider('invalid')]
    public function testInvalidCookiesAreRefused(\Closure $make): void
    {
        $this->expectException(\ValueError::class);
        $make();
    }

    public function testCookieHeadersAreParsedLikeDollarCookie(): void
    {
        $parsed = Cookie::parseHeader(['a=1; b="two"; bad pair; =x; c=%41+b; a=second', 'd=; e=x=y', 'f=q"uote; g=ok']);
        self::assertSame(['a' => '1', 'b' => 'two', 'c' => 'A b', 'd' => '', 'e' => 'x=y', 'g' => 'ok'], $parsed);
    }

    public function testAValueRoundTripsThroughSetCookieAndCookieHeader(): void
    {
        $value = "é ;,+%\"x";
        $pair = explode(';', (new Cookie('k', $value))->headerValue())[0];
        self::assertSame(['k' => $value], Cookie::parseHeader([$pair]));
    }
}
