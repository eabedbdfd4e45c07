<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Redis\Resp;

use Kiln\Redis\ProtocolException;
use Kiln\Redis\Resp\Attributed;
use Kiln\Redis\Resp\BigNumber;
use Kiln\Redis\Resp\ErrorReply;
use Kiln\Redis\Resp\Push;
use Kiln\Redis\Resp\RespLimits;
use Kiln\Redis\Resp\RespParser;
use Kiln\Redis\Resp\VerbatimString;
use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;

/** Every RESP2 and RESP3 type, each case fed whole, byte by byte and split at every offset. */
final class RespParserTest extends TestCase
{
    /** @return iterable<string, array{string, list<mixed>}> */
    public static function replies(): iterable
    {
        yield 'simple string' => ["+OK\r\n", ['OK']];
        yield 'empty simple string' => ["+\r\n", ['']];
        yield 'simple error' => ["-ERR unknown command\r\n", [new ErrorReply('ERR unknown command')]];
        yield 'integer' => [":1000\r\n", [1000]];
        yield 'negative integer' => [":-42\r\n", [-42]];
        yield 'largest integer' => [':' . PHP_INT_MAX . "\r\n", [PHP_INT_MAX]];
        yield 'bulk' => ["\$5\r\nhello\r\n", ['hello']];
        yield 'bulk holding CRLF and NUL' => ["\$7\r\na\r\nb\0c\r\r\n", ["a\r\nb\0c\r"]];
        yield 'empty bulk' => ["\$0\r\n\r\n", ['']];
        yield 'null bulk' => ["\$-1\r\n", [null]];
        yield 'array' => ["*2\r\n\$3\r\nfoo\r\n:7\r\n", [['foo', 7]]];
        yield 'empty array' => ["*0\r\n", [[]]];
        yield 'null array' => ["*-1\r\n", [null]];
        yield 'nested array with an error inside (EXEC)' => ["*2\r\n*1\r\n+a\r\n-WRONGTYPE no\r\n", [[['a'], new ErrorReply('WRONGTYPE no')]]];
        yield 'RESP3 null' => ["_\r\n", [null]];
        yield 'RESP3 booleans' => ["#t\r\n#f\r\n", [true, false]];
        yield 'RESP3 double' => [",3.25\r\n,-1e3\r\n,10\r\n", [3.25, -1000.0, 10.0]];
        yield 'RESP3 infinities' => [",inf\r\n,-inf\r\n", [INF, -INF]];
        yield 'RESP3 big number' => ["(3492890328409238509324850943850943825024385\r\n", [new BigNumber('3492890328409238509324850943850943825024385')]];
        yield 'RESP3 blob error' => ["!21\r\nSYNTAX invalid syntax\r\n", [new ErrorReply('SYNTAX invalid syntax')]];
        yield 'RESP3 verbatim string' => ["=15\r\ntxt:Some string\r\n", [new VerbatimString('txt', 'Some string')]];
        yield 'RESP3 map' => ["%2\r\n+first\r\n:1\r\n\$6\r\nsecond\r\n*1\r\n:2\r\n", [['first' => 1, 'second' => [2]]]];
        yield 'RESP3 map with integer keys' => ["%1\r\n:5\r\n+five\r\n", [[5 => 'five']]];
        yield 'RESP3 set' => ["~3\r\n+a\r\n+b\r\n:1\r\n", [['a', 'b', 1]]];
        yield 'RESP3 push' => [">3\r\n\$7\r\nmessage\r\n\$2\r\nch\r\n\$2\r\nhi\r\n", [new Push(['message', 'ch', 'hi'])]];
        yield 'RESP3 attribute before a reply' => ["|1\r\n+ttl\r\n:3600\r\n:2\r\n", [new Attributed(['ttl' => 3600], 2)]];
        yield 'several replies in one read (a pipeline)' => ["+OK\r\n:1\r\n\$-1\r\n*1\r\n+x\r\n", ['OK', 1, null, ['x']]];
    }

    /** @param list<mixed> $expected */
    #[DataProvider('replies')]
    public function testEachReplyIsParsedWholeByteByByteAndSplitAnywhere(string $bytes, array $expected): void
    {
        self::assertEquals($expected, (new RespParser())->feed($bytes), 'whole');

        $parser = new RespParser();
        $values = [];
        foreach (str_split($bytes) as $byte) {
            array_push($values, ...$parser->feed($byte));
        }
        self::assertEquals($expected, $values, 'byte by byte');
        self::assertSame(0, $parser->buffered());

        for ($cut = 1; $cut < \strlen($bytes); $cut++) {
            $parser = new RespParser();
            $values = [...$parser->feed(substr($bytes, 0, $cut)), ...$parser->feed(substr($bytes, $cut))];
            self::assertEquals($expected, $values, "split at $cut");
        }
    }

    public function testADoubleNanIsParsedAsNan(): void
    {
        $values = (new RespParser())->feed(",nan\r\n");
        self::assertCount(1, $values);
        self::assertIsFloat($values[0]);
        self::assertNan($values[0]);
    }

    public function testAnElementCutInTwoIsHeldUntilTheRestComes(): void
    {
        $parser = new RespParser();
        self::assertSame([], $parser->feed("*2\r\n\$3\r\nfoo\r\n\$3\r\nba"));
        self::assertSame(6, $parser->buffered(), 'only the cut bulk waits; "foo" is in the open array already');
        self::assertSame([['foo', 'bar']], $parser->feed("r\r\n"));
        self::assertSame(0, $parser->buffered());
    }

    public function testALargeReplyArrivingInPiecesIsReadOnceNotFromItsStartAtEachPiece(): void
    {
        $elements = [];
        $bytes = "*20000\r\n";
        for ($i = 0; $i < 20000; $i++) {
            $elements[] = "element-$i";
            $bytes .= '$' . \strlen("element-$i") . "\r\nelement-$i\r\n";
        }
        $parser = new RespParser();
        $values = [];
        foreach (str_split($bytes, 1000) as $piece) {
            array_push($values, ...$parser->feed($piece));
            self::assertLessThan(1000, $parser->buffered(), 'what was read stays read');
        }
        self::assertSame([$elements], $values);
    }

    /** @return iterable<string, array{string, string}> */
    public static function rejected(): iterable
    {
        yield 'unknown type byte' => ["?3\r\n", 'Unknown RESP type byte 0x3f'];
        yield 'integer with letters' => [":12a\r\n", 'Malformed or out-of-range RESP integer "12a"'];
        yield 'integer past 64 bits' => [":99999999999999999999\r\n", 'out-of-range RESP integer'];
        yield 'bulk length not a number' => ["\$x\r\n", 'Malformed or out-of-range RESP integer "x"'];
        yield 'negative bulk length' => ["\$-2\r\n", 'Negative bulk length -2'];
        yield 'bulk without CRLF after it' => ["\$3\r\nabcde\r\n", 'A bulk of 3 bytes is not followed by CRLF'];
        yield 'negative array length' => ["*-3\r\n", 'Negative array length -3'];
        yield 'RESP3 null map' => ["%-1\r\n", 'Negative map length -1'];
        yield 'boolean other than t or f' => ["#x\r\n", 'A RESP3 boolean is "t" or "f"'];
        yield 'null with data' => ["_x\r\n", 'A RESP3 null carries no data'];
        yield 'malformed double' => [",1.2.3\r\n", 'Malformed RESP3 double'];
        yield 'malformed big number' => ["(12x\r\n", 'Malformed big number'];
        yield 'verbatim without format' => ["=2\r\nab\r\n", 'A verbatim string starts with a three-letter format'];
        yield 'map with an array key' => ["%1\r\n*0\r\n:1\r\n", 'A map key of type array is not supported'];
    }

    #[DataProvider('rejected')]
    public function testMalformedInputIsRejectedWholeAndByteByByte(string $bytes, string $message): void
    {
        try {
            (new RespParser())->feed($bytes);
            self::fail('whole: no exception');
        } catch (ProtocolException $e) {
            self::assertStringContainsString($message, $e->getMessage());
        }
        $parser = new RespParser();
        try {
            foreach (str_split($bytes) as $byte) {
                $parser->feed($byte);
            }
            self::fail('byte by byte: no exception');
        } catch (ProtocolException $e) {
            self::assertStringContainsString($message, $e->getMessage());
        }
    }

    public function testAFailedParserStaysFailed(): void
    {
        $parser = new RespParser();
        try {
            $parser->feed("?\r\n");
        } catch (ProtocolException) {
        }
        $this->expectException(ProtocolException::class);
        $parser->feed("+OK\r\n");
    }

    /** @return iterable<string, array{RespLimits, string, string}> */
    public static function overLimits(): iterable
    {
        $limits = new RespLimits(maxDepth: 2, maxBulkBytes: 8, maxElements: 3, maxLineBytes: 16);
        yield 'nesting' => [$limits, "*1\r\n*1\r\n*1\r\n:1\r\n", 'Replies nested deeper than 2 levels'];
        yield 'bulk size' => [$limits, "\$9\r\n", 'A bulk of 9 bytes is over the limit of 8'];
        yield 'elements' => [$limits, "*4\r\n", 'A array of 4 elements is over the limit of 3'];
        yield 'map pairs' => [$limits, "%4\r\n", 'A map of 4 elements is over the limit of 3'];
        yield 'long line, complete' => [$limits, '+' . str_repeat('a', 20) . "\r\n", 'A RESP line is longer than 16 bytes'];
        yield 'long line, no CRLF yet' => [$limits, '+' . str_repeat('a', 20), 'A RESP line is longer than 16 bytes'];
    }

    #[DataProvider('overLimits')]
    public function testLimitsAreEnforcedWithAClearMessage(RespLimits $limits, string $bytes, string $message): void
    {
        foreach ([[$bytes], str_split($bytes)] as $chunks) {
            $parser = new RespParser($limits);
            try {
                foreach ($chunks as $chunk) {
                    $parser->feed($chunk);
                }
                self::fail('no exception');
            } catch (ProtocolException $e) {
                self::assertSame($message, $e->getMessage());
            }
        }
    }

    public function testRepliesWithinTheLimitsPass(): void
    {
        $parser = new RespParser(new RespLimits(maxDepth: 2, maxBulkBytes: 8, maxElements: 3, maxLineBytes: 16));
        self::assertSame([[['12345678']]], $parser->feed("*1\r\n*1\r\n\$8\r\n12345678\r\n"));
    }
}
