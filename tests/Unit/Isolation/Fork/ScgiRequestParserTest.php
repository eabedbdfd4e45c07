<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Isolation\Fork;

use Kiln\Isolation\Fork\Scgi;
use Kiln\Isolation\Fork\ScgiException;
use Kiln\Isolation\Fork\ScgiRequestParser;
use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;

final class ScgiRequestParserTest extends TestCase
{
    /**
     * Feeds $input whole and byte by byte, asserts both agree, returns [params, body, complete] or an error.
     *
     * @return array{0: array<string, string>|string|null, 1: string, 2: bool}
     */
    private static function parse(string $input, int $max = 65536): array
    {
        $whole = self::feedAll([$input], $max);
        $bytes = self::feedAll($input === '' ? [] : \str_split($input), $max);
        self::assertSame($whole, $bytes, 'Feeding byte by byte must give the same result as one feed');

        return $whole;
    }

    /**
     * @param list<string> $feeds
     *
     * @return array{0: array<string, string>|string|null, 1: string, 2: bool}
     */
    private static function feedAll(array $feeds, int $max): array
    {
        $parser = new ScgiRequestParser($max);
        $params = null;
        $body = '';
        try {
            foreach ($feeds as $bytes) {
                $got = $parser->feed($bytes);
                if ($got !== null) {
                    self::assertNull($params, 'the params come once');
                    $params = $got;
                }
                $body .= $parser->body();
            }
        } catch (ScgiException $e) {
            return ['error: ' . $e->getMessage(), '', false];
        }

        return [$params, $body, $parser->isComplete()];
    }

    public function testTheEncoderAndTheParserAgree(): void
    {
        $params = ['REQUEST_METHOD' => 'POST', 'SCRIPT_FILENAME' => '/srv/a.php', 'EMPTY' => '', 'HTTP_X' => "caf\xc3\xa9"];
        $input = Scgi::head($params, 5) . 'hello';
        self::assertSame([['CONTENT_LENGTH' => '5', 'SCGI' => '1'] + $params, 'hello', true], self::parse($input));
    }

    public function testTheSpecExampleParses(): void
    {
        $block = "CONTENT_LENGTH\00027\0SCGI\0001\0REQUEST_METHOD\0POST\0REQUEST_URI\0/deepthought\0";
        $input = \strlen($block) . ':' . $block . ',' . 'What is the answer to life?';
        [$params, $body, $complete] = self::parse($input);
        self::assertIsArray($params);
        self::assertSame('/deepthought', $params['REQUEST_URI']);
        self::assertSame('What is the answer to life?', $body);
        self::assertTrue($complete);
    }

    public function testARequestWithoutBodyIsCompleteAtOnce(): void
    {
        self::assertSame([['CONTENT_LENGTH' => '0', 'SCGI' => '1', 'A' => 'b'], '', true], self::parse(Scgi::head(['A' => 'b'], 0)));
    }

    public function testAPartialBodyIsNotComplete(): void
    {
        [$params, $body, $complete] = self::parse(Scgi::head([], 10) . 'abc');
        self::assertIsArray($params);
        self::assertSame('abc', $body);
        self::assertFalse($complete);
    }

    public function testTheEncoderOverridesContentLengthAndRefusesNul(): void
    {
        self::assertStringStartsWith("24:CONTENT_LENGTH\0003\0SCGI\0001\0", Scgi::head(['CONTENT_LENGTH' => '99', 'SCGI' => '2'], 3));
        $this->expectException(\ValueError::class);
        Scgi::head(['A' => "x\0y"], 0);
    }

    /** @return iterable<string, array{string, string, 2?: int}> */
    public static function rejected(): iterable
    {
        $ok = "CONTENT_LENGTH\0000\0SCGI\0001\0";
        yield 'a non-digit length' => ['x:', 'Malformed netstring length'];
        yield 'an empty length' => [':abc,', 'Malformed netstring length'];
        yield 'a leading zero' => ['024:' . $ok . ',', 'Malformed netstring length'];
        yield 'a length too long to be one' => ['12345678901', 'Malformed netstring length'];
        yield 'a header block over the limit' => ['100:', 'exceed 50 bytes', 50];
        yield 'no comma after the block' => [\strlen($ok) . ':' . $ok . ';', 'does not end in a comma'];
        yield 'a block not ending in NUL' => ['3:abc,', 'must end in NUL'];
        yield 'a name without value' => [self::netstring("CONTENT_LENGTH\0000\0SCGI\0"), 'has no value'];
        yield 'CONTENT_LENGTH not first' => [self::netstring("SCGI\0001\0CONTENT_LENGTH\0000\0"), 'must be CONTENT_LENGTH'];
        yield 'a bad CONTENT_LENGTH' => [self::netstring("CONTENT_LENGTH\0-1\0SCGI\0001\0"), 'Malformed CONTENT_LENGTH'];
        yield 'a CONTENT_LENGTH with a leading zero' => [self::netstring("CONTENT_LENGTH\00001\0SCGI\0001\0"), 'Malformed CONTENT_LENGTH'];
        yield 'no SCGI header' => [self::netstring("CONTENT_LENGTH\0000\0"), 'SCGI header must be 1'];
        yield 'a wrong SCGI version' => [self::netstring("CONTENT_LENGTH\0000\0SCGI\0002\0"), 'SCGI header must be 1'];
        yield 'a repeated name' => [self::netstring("CONTENT_LENGTH\0000\0SCGI\0001\0SCGI\0001\0"), 'repeated'];
        yield 'an empty name' => [self::netstring("CONTENT_LENGTH\0000\0SCGI\0001\0\0x\0"), 'Empty'];
        yield 'bytes past the body' => [Scgi::head([], 2) . 'abc', 'More bytes than CONTENT_LENGTH'];
    }

    private static function netstring(string $block): string
    {
        return \strlen($block) . ':' . $block . ',';
    }

    #[DataProvider('rejected')]
    public function testMalformedRequestsAreRefused(string $input, string $message, int $max = 65536): void
    {
        [$error] = self::parse($input, $max);
        self::assertIsString($error);
        self::assertStringContainsString($message, $error);
    }
}
