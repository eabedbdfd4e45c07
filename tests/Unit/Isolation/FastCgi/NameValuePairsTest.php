<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Isolation\FastCgi;

use Kiln\Isolation\FastCgi\NameValuePairs;
use Kiln\Isolation\FastCgi\ProtocolException;
use Kiln\Isolation\FastCgi\RecordEncoder;
use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;

final class NameValuePairsTest extends TestCase
{
    public function testShortLengthsTakeOneByteAndLongOnesFourWithTheHighBitSet(): void
    {
        self::assertSame("\x01\x03Abcd", NameValuePairs::encode(['A' => 'bcd']));
        self::assertSame("\x01\x00A", NameValuePairs::encode(['A' => '']));
        self::assertSame("\x7F\x80\x00\x00\x80" . \str_repeat('n', 127) . \str_repeat('v', 128), NameValuePairs::encode([\str_repeat('n', 127) => \str_repeat('v', 128)]));
        self::assertSame("\x80\x01\x00\x00\x01" . \str_repeat('n', 65536) . 'v', NameValuePairs::encode([\str_repeat('n', 65536) => 'v']));
    }

    /** @return iterable<string, array{array<string, string>}> */
    public static function pairs(): iterable
    {
        yield 'none' => [[]];
        yield 'typical CGI params' => [['SCRIPT_FILENAME' => '/srv/www/index.php', 'QUERY_STRING' => 'a=1&b=2', 'REQUEST_METHOD' => 'GET', 'CONTENT_LENGTH' => '']];
        yield 'lengths at the boundary' => [[\str_repeat('a', 127) => \str_repeat('b', 127), \str_repeat('c', 128) => \str_repeat('d', 128)]];
        yield 'binary values' => [['X' => "\0\xFF\r\n", 'HTTP_COOKIE' => 'a=b; c=d']];
        yield 'a value larger than one record' => [['HTTP_X_BIG' => \str_repeat('z', 70000), 'AFTER' => 'yes']];
    }

    /** @param array<string, string> $pairs */
    #[DataProvider('pairs')]
    public function testPairsSurviveARoundTrip(array $pairs): void
    {
        self::assertSame($pairs, NameValuePairs::decode(NameValuePairs::encode($pairs)));
    }

    /** @param array<string, string> $pairs */
    #[DataProvider('pairs')]
    public function testParamsStreamSplitOverRecordsJoinsBackToThePairs(array $pairs): void
    {
        $records = RecordHarness::decode(RecordEncoder::params(1, $pairs));
        $last = \array_pop($records);
        self::assertSame([4, 1, ''], $last, 'The PARAMS stream ends with an empty record');
        foreach ($records as $record) {
            self::assertSame(4, $record[0]);
            self::assertNotSame('', $record[2] ?? '');
        }
        self::assertSame($pairs, NameValuePairs::decode(\implode('', \array_column($records, 2))));
    }

    public function testALaterPairReplacesAnEarlierOneOfTheSameName(): void
    {
        self::assertSame(['A' => '2'], NameValuePairs::decode("\x01\x01A1\x01\x01A2"));
    }

    /** @return iterable<string, array{string, string}> */
    public static function malformed(): iterable
    {
        yield 'only a name length' => ["\x01", 'inside its lengths'];
        yield 'truncated four-byte length' => ["\x80\x00\x01", 'four-byte length'];
        yield 'truncated four-byte value length' => ["\x01\x80\x00", 'four-byte length'];
        yield 'name longer than the rest' => ["\x05\x00abc", 'claims 5 + 0 bytes but only 3 remain'];
        yield 'value longer than the rest' => ["\x01\x05Aabc", 'claims 1 + 5 bytes'];
        yield 'huge four-byte length' => ["\xFF\xFF\xFF\xFF\x00", 'claims 2147483647'];
        yield 'empty name' => ["\x00\x01x", 'empty name'];
        yield 'a good pair then garbage' => ["\x01\x01Ab\x09\x00", 'claims 9 + 0'];
    }

    #[DataProvider('malformed')]
    public function testMalformedPairsAreRejectedWithAClearMessage(string $bytes, string $message): void
    {
        $this->expectException(ProtocolException::class);
        $this->expectExceptionMessage($message);
        NameValuePairs::decode($bytes);
    }

    public function testEmptyNameCannotBeEncoded(): void
    {
        $this->expectException(\ValueError::class);
        NameValuePairs::encode(['' => 'x']);
    }
}
