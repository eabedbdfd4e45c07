<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Http;

use Kiln\Http\Response;
use PHPUnit\Framework\TestCase;

/** Header names are case-insensitive; headers() keeps them as written, in the order first set. */
final class ResponseHeadersTest extends TestCase
{
    public function testHeadersAreFoundWhateverTheCaseOfTheName(): void
    {
        $response = new Response(200, ['Content-Type' => 'text/plain', 'X-Custom' => 'a']);
        foreach (['Content-Type', 'content-type', 'CONTENT-TYPE'] as $name) {
            self::assertSame('text/plain', $response->header($name), $name);
            self::assertTrue($response->hasHeader($name), $name);
        }
        self::assertSame('a', $response->header('x-custom'));
        self::assertNull($response->header('X-Other'));
        self::assertFalse($response->hasHeader('x-other'));
    }

    public function testSettingAHeaderAgainUnderAnotherSpellingKeepsItsPlaceAndTakesTheNewSpelling(): void
    {
        $response = new Response(200, ['Content-Type' => 'text/plain', 'X-A' => '1', 'X-B' => '2']);
        $response->setHeader('x-a', 'one');
        $response->setHeader('content-type', 'text/html');
        self::assertSame(['content-type' => ['text/html'], 'x-a' => ['one'], 'X-B' => ['2']], $response->headers());
    }

    public function testAddingToAHeaderKeepsTheSpellingItWasFirstSetWith(): void
    {
        $response = new Response();
        $response->addHeader('Set-Cookie', 'a=1');
        $response->addHeader('set-cookie', 'b=2');
        $response->setHeader('X-List', ['1']);
        $response->addHeader('X-LIST', '2');
        self::assertSame(['Set-Cookie' => ['a=1', 'b=2'], 'X-List' => ['1', '2']], $response->headers());
    }

    public function testARemovedHeaderSetAgainGoesLast(): void
    {
        $response = new Response(200, ['X-A' => '1', 'X-B' => '2']);
        $response->removeHeader('x-a');
        self::assertFalse($response->hasHeader('X-A'));
        $response->setHeader('X-A', '3');
        self::assertSame(['X-B' => ['2'], 'X-A' => ['3']], $response->headers());
        $response->removeHeader('X-Missing');
        self::assertSame(['X-B' => ['2'], 'X-A' => ['3']], $response->headers());
    }

    public function testTwoSpellingsOfOneNameInTheConstructorMakeOneHeaderTheLastWins(): void
    {
        $response = new Response(200, ['Content-Type' => 'text/plain', 'content-type' => 'text/html']);
        self::assertSame(['content-type' => ['text/html']], $response->headers());
    }

    public function testAnEmptyListIsAHeaderWithoutValues(): void
    {
        $response = new Response();
        $response->setHeader('X-Empty', []);
        self::assertTrue($response->hasHeader('x-empty'));
        self::assertNull($response->header('X-Empty'));
        self::assertSame(['X-Empty' => []], $response->headers());
    }

    public function testWireHeadersLeaveOutTheFramingFieldsWhateverTheirSpelling(): void
    {
        $response = new Response(200, ['content-length' => '5', 'X-A' => '1', 'Transfer-Encoding' => 'chunked']);
        self::assertSame(['X-A' => ['1']], $response->wireHeaders());
        self::assertSame(['content-length', 'X-A', 'Transfer-Encoding'], array_keys($response->headers()));
    }

    public function testANumericNameIsAHeaderLikeAnyOther(): void
    {
        $response = new Response();
        $response->setHeader('123', 'a');
        $response->setHeader('123', 'b');
        self::assertSame('b', $response->header('123'));
        self::assertSame(['b'], $response->headers()[123] ?? null);
    }
}
