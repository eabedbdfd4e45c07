<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Http\Static;

use Kiln\Http\Static\ByteRange;
use Kiln\Http\Static\RangeOutcome;
use Kiln\Http\Static\RangeParser;
use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;

/**
 * Range headers against a representation of 1000 bytes unless the case says otherwise. The header is one
 * short field value, parsed whole; the table of ignored headers matters as much as the accepted ones.
 */
final class RangeParserTest extends TestCase
{
    /** @return iterable<string, array{string, list<array{int, int}>, 2?: int}> header, [first, last] ranges, size */
    public static function satisfiable(): iterable
    {
        yield 'single' => ['bytes=0-499', [[0, 499]]];
        yield 'single in the middle' => ['bytes=500-599', [[500, 599]]];
        yield 'one byte' => ['bytes=0-0', [[0, 0]]];
        yield 'last byte by offset' => ['bytes=999-999', [[999, 999]]];
        yield 'open ended' => ['bytes=500-', [[500, 999]]];
        yield 'open from zero' => ['bytes=0-', [[0, 999]]];
        yield 'suffix' => ['bytes=-500', [[500, 999]]];
        yield 'suffix of one' => ['bytes=-1', [[999, 999]]];
        yield 'suffix longer than the file' => ['bytes=-5000', [[0, 999]]];
        yield 'last past the end is clipped' => ['bytes=900-5000', [[900, 999]]];
        yield 'unit in upper case' => ['BYTES=0-9', [[0, 9]]];
        yield 'leading zeros' => ['bytes=007-010', [[7, 10]]];
        yield 'huge last' => ['bytes=10-99999999999999999999999', [[10, 999]]];
        yield 'huge suffix' => ['bytes=-99999999999999999999999', [[0, 999]]];
        yield 'two disjoint, request order kept' => ['bytes=500-599,0-99', [[500, 599], [0, 99]]];
        yield 'three with suffix' => ['bytes=0-1,5-6,-2', [[0, 1], [5, 6], [998, 999]]];
        yield 'spaces around commas' => ["bytes=0-1 , \t5-6", [[0, 1], [5, 6]]];
        yield 'space after = (list whitespace)' => ['bytes= 0-4', [[0, 4]]];
        yield 'empty list elements' => ['bytes=,0-1,,5-6,', [[0, 1], [5, 6]]];
        yield 'overlapping coalesced' => ['bytes=0-499,400-599', [[0, 599]]];
        yield 'adjacent coalesced' => ['bytes=0-99,100-199', [[0, 199]]];
        yield 'contained coalesced' => ['bytes=0-999,10-20', [[0, 999]]];
        yield 'same range twice' => ['bytes=10-20,10-20', [[10, 20]]];
        yield 'merged range takes the earliest request position' => ['bytes=800-899,100-199,150-250', [[800, 899], [100, 250]]];
        yield 'merge bridges later into earlier' => ['bytes=300-399,0-99,50-320', [[0, 399]]];
        yield 'unsatisfiable specs dropped among good ones' => ['bytes=2000-3000,0-9', [[0, 9]]];
        yield 'zero suffix dropped among good ones' => ['bytes=-0,0-9', [[0, 9]]];
        yield 'the whole file as a range' => ['bytes=0-999', [[0, 999]]];
        yield 'one-byte file' => ['bytes=0-', [[0, 0]], 1];
        yield 'suffix on a one-byte file' => ['bytes=-10', [[0, 0]], 1];
        yield '32 disjoint ranges (the limit)' => ['bytes=' . self::disjoint(32), self::disjointRanges(32)];
        yield '1000 overlapping copies of the file collapse to one' => ['bytes=' . implode(',', array_fill(0, 1000, '0-')), [[0, 999]]];
        yield 'thousands of tiny adjacent ranges collapse' => ['bytes=' . implode(',', array_map(static fn(int $i): string => "$i-$i", range(0, 999))), [[0, 999]]];
    }

    /** @return iterable<string, array{string, 1?: int}> headers that must be ignored: 200 with the whole file */
    public static function ignored(): iterable
    {
        yield 'empty' => [''];
        yield 'unit only' => ['bytes='];
        yield 'unit and commas only' => ['bytes=,,'];
        yield 'no unit' => ['0-499'];
        yield 'other unit' => ['items=0-4'];
        yield 'unit prefix only' => ['bytesx=0-4'];
        yield 'space before =' => ['bytes =0-4'];
        yield 'last before first' => ['bytes=500-400'];
        yield 'last before first among good ones' => ['bytes=0-9,500-400'];
        yield 'dash only' => ['bytes=-'];
        yield 'letters' => ['bytes=a-b'];
        yield 'hex' => ['bytes=0x0-0x9'];
        yield 'negative first' => ['bytes=-5-10'];
        yield 'plus sign' => ['bytes=+5-10'];
        yield 'two dashes' => ['bytes=0--9'];
        yield 'space inside a spec' => ['bytes=0 - 9'];
        yield 'decimal' => ['bytes=1.5-9'];
        yield 'semicolon separator' => ['bytes=0-1;5-6'];
        yield 'missing dash' => ['bytes=5'];
        yield 'other-range junk' => ['bytes=0-1,abc'];
        yield 'too many disjoint ranges after coalescing' => ['bytes=' . self::disjoint(33)];
        yield 'a suffix on an empty file (nothing to range over)' => ['bytes=-10', 0];
    }

    /** @return iterable<string, array{string, 1?: int}> well-formed, nothing satisfiable: 416 */
    public static function unsatisfiable(): iterable
    {
        yield 'first at the end' => ['bytes=1000-'];
        yield 'first past the end' => ['bytes=5000-6000'];
        yield 'huge first' => ['bytes=99999999999999999999-'];
        yield 'zero suffix' => ['bytes=-0'];
        yield 'all specs past the end' => ['bytes=1000-1001,2000-'];
        yield 'any range of an empty file' => ['bytes=0-', 0];
        yield 'first range of an empty file' => ['bytes=0-0', 0];
    }

    /** @param list<array{int, int}> $expected */
    #[DataProvider('satisfiable')]
    public function testSatisfiableRangesAreReturnedCoalescedInRequestOrder(string $header, array $expected, int $size = 1000): void
    {
        $set = (new RangeParser())->parse($header, $size);
        self::assertSame(RangeOutcome::Partial, $set->outcome);
        self::assertSame($expected, array_map(static fn(ByteRange $r): array => [$r->first, $r->last], $set->ranges));
        $total = array_sum(array_map(static fn(ByteRange $r): int => $r->length(), $set->ranges));
        self::assertLessThanOrEqual($size, $total, 'never more bytes than the representation has');
    }

    #[DataProvider('ignored')]
    public function testMalformedOrAbusiveHeadersAreIgnored(string $header, int $size = 1000): void
    {
        $set = (new RangeParser())->parse($header, $size);
        self::assertSame(RangeOutcome::Full, $set->outcome);
        self::assertSame([], $set->ranges);
    }

    #[DataProvider('unsatisfiable')]
    public function testWellFormedRangesOutsideTheFileAreUnsatisfiable(string $header, int $size = 1000): void
    {
        $set = (new RangeParser())->parse($header, $size);
        self::assertSame(RangeOutcome::Unsatisfiable, $set->outcome);
    }

    public function testTheRangeLimitIsConfigurable(): void
    {
        $parser = new RangeParser(maxRanges: 2);
        self::assertSame(RangeOutcome::Partial, $parser->parse('bytes=0-1,5-6', 100)->outcome);
        self::assertSame(RangeOutcome::Full, $parser->parse('bytes=0-1,5-6,9-10', 100)->outcome);
        self::assertSame(RangeOutcome::Partial, $parser->parse('bytes=0-1,5-6,2-4', 100)->outcome, 'coalesced first, then counted');
    }

    public function testAZeroRangeLimitIsAProgrammingError(): void
    {
        $this->expectException(\ValueError::class);
        new RangeParser(0);
    }

    public function testContentRangeNamesInclusiveOffsetsAndTheSize(): void
    {
        $range = new ByteRange(10, 19);
        self::assertSame(10, $range->length());
        self::assertSame('bytes 10-19/100', $range->contentRange(100));
    }

    private static function disjoint(int $count): string
    {
        return implode(',', array_map(static fn(array $r): string => "$r[0]-$r[1]", self::disjointRanges($count)));
    }

    /** @return list<array{int, int}> */
    private static function disjointRanges(int $count): array
    {
        return array_map(static fn(int $i): array => [$i * 10, $i * 10 + 1], range(0, $count - 1));
    }
}
