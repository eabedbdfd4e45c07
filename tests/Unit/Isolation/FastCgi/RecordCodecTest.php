<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Isolation\FastCgi;

use Kiln\Isolation\FastCgi\ProtocolStatus;
use Kiln\Isolation\FastCgi\Record;
use Kiln\Isolation\FastCgi\RecordDecoder;
use Kiln\Isolation\FastCgi\RecordEncoder;
use Kiln\Isolation\FastCgi\RecordType;
use Kiln\Isolation\FastCgi\Role;
use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;

/** Every record type encoded, then decoded whole, byte by byte and split at every offset. */
final class RecordCodecTest extends TestCase
{
    public function testBeginRequestHasTheWireLayoutOfTheSpecification(): void
    {
        self::assertSame(
            "\x01\x01\x00\x07\x00\x08\x00\x00" . "\x00\x01\x01\x00\x00\x00\x00\x00",
            RecordEncoder::beginRequest(7, Role::Responder, true),
        );
        self::assertSame("\x00\x03\x00\x00\x00\x00\x00\x00", \substr(RecordEncoder::beginRequest(1, Role::Filter), 8));
    }

    public function testContentIsPaddedToAMultipleOfEightBytes(): void
    {
        for ($length = 0; $length <= 17; $length++) {
            $bytes = RecordEncoder::record(RecordType::Stdout->value, 1, \str_repeat('x', $length));
            self::assertSame(0, \strlen($bytes) % 8, "content of {$length} bytes");
            self::assertSame(-$length & 7, \ord($bytes[6]), 'padding length byte');
            self::assertSame([[6, 1, \str_repeat('x', $length)]], RecordHarness::decode($bytes));
        }
    }

    /** @return iterable<string, array{string, list<array{int, int, string}>}> */
    public static function records(): iterable
    {
        yield 'begin request, responder, keep-conn' => [RecordEncoder::beginRequest(1, Role::Responder, true), [[1, 1, "\x00\x01\x01\0\0\0\0\0"]]];
        yield 'abort request' => [RecordEncoder::abortRequest(65535), [[2, 65535, '']]];
        yield 'end request' => [RecordEncoder::endRequest(2, 0xFFFFFFFE, ProtocolStatus::Overloaded), [[3, 2, "\xFF\xFF\xFF\xFE\x02\0\0\0"]]];
        yield 'stdin with its terminator' => [RecordEncoder::stream(RecordType::Stdin, 1, 'body', true), [[5, 1, 'body'], [5, 1, '']]];
        yield 'stdout in two writes' => [RecordEncoder::stream(RecordType::Stdout, 1, "Status: 200\r\n\r\n") . RecordEncoder::stream(RecordType::Stdout, 1, 'hi', true), [[6, 1, "Status: 200\r\n\r\n"], [6, 1, 'hi'], [6, 1, '']]];
        yield 'stderr' => [RecordEncoder::stream(RecordType::Stderr, 3, "PHP Warning: x\n"), [[7, 3, "PHP Warning: x\n"]]];
        yield 'data' => [RecordEncoder::stream(RecordType::Data, 1, 'file', true), [[8, 1, 'file'], [8, 1, '']]];
        yield 'empty stream is only the terminator' => [RecordEncoder::stream(RecordType::Stdin, 1, '', true), [[5, 1, '']]];
        yield 'get values' => [RecordEncoder::getValues(['FCGI_MAX_CONNS', 'FCGI_MPXS_CONNS']), [[9, 0, "\x0E\x00FCGI_MAX_CONNS\x0F\x00FCGI_MPXS_CONNS"]]];
        yield 'get values result' => [RecordEncoder::getValuesResult(['FCGI_MPXS_CONNS' => '0']), [[10, 0, "\x0F\x01FCGI_MPXS_CONNS0"]]];
        yield 'unknown type' => [RecordEncoder::unknownType(42), [[11, 0, "\x2A\0\0\0\0\0\0\0"]]];
        yield 'a type 1.0 does not define is passed on' => [RecordEncoder::record(42, 0, 'x'), [[42, 0, 'x']]];
        yield 'the longest padding' => ["\x01\x06\x00\x01\x00\x02\xFF\x00ok" . \str_repeat("\0", 255), [[6, 1, 'ok']]];
        yield 'no padding on unaligned content' => ["\x01\x06\x00\x01\x00\x03\x00\x00abc", [[6, 1, 'abc']]];
        yield 'a whole exchange' => [
            RecordEncoder::beginRequest(1) . RecordEncoder::params(1, ['A' => 'b']) . RecordEncoder::stream(RecordType::Stdin, 1, '', true)
            . RecordEncoder::stream(RecordType::Stdout, 1, 'out', true) . RecordEncoder::endRequest(1, 0),
            [[1, 1, "\x00\x01\0\0\0\0\0\0"], [4, 1, "\x01\x01Ab"], [4, 1, ''], [5, 1, ''], [6, 1, 'out'], [6, 1, ''], [3, 1, "\0\0\0\0\0\0\0\0"]],
        ];
    }

    /** @param list<array{int, int, string}> $expected */
    #[DataProvider('records')]
    public function testRecordDecodesToWhatWasEncoded(string $bytes, array $expected): void
    {
        self::assertSame($expected, RecordHarness::decode($bytes));
    }

    public function testStreamLongerThan65535BytesIsSplitAcrossRecords(): void
    {
        $data = \random_bytes(65535 * 2 + 10);
        $records = RecordHarness::decode(RecordEncoder::stream(RecordType::Stdout, 9, $data, true));
        self::assertSame([65535, 65535, 10, 0], \array_map(static fn(array $r): int => \strlen((string) ($r[2] ?? '')), $records));
        self::assertSame($data, \implode('', \array_column($records, 2)));
    }

    public function testRecordsOfExactlyMaximumContentNeedOneRecordEach(): void
    {
        $records = RecordHarness::decode(RecordEncoder::stream(RecordType::Stdin, 1, \str_repeat('a', 65535)));
        self::assertCount(1, $records);
    }

    public function testTypedReadersDecodeTheFixedBodies(): void
    {
        $decoder = new RecordDecoder();
        $decoder->feed(RecordEncoder::beginRequest(4, Role::Authorizer, true) . RecordEncoder::endRequest(4, 255, ProtocolStatus::UnknownRole) . RecordEncoder::unknownType(99));
        $begin = $decoder->next()?->beginRequest();
        self::assertNotNull($begin);
        self::assertSame([4, Role::Authorizer, true], [$begin->requestId, $begin->role(), $begin->keepConnection()]);
        $end = $decoder->next()?->endRequest();
        self::assertNotNull($end);
        self::assertSame([4, 255, ProtocolStatus::UnknownRole, false], [$end->requestId, $end->appStatus, $end->status(), $end->isComplete()]);
        self::assertSame(99, $decoder->next()?->unknownType());
        self::assertNull($decoder->next());
    }

    public function testUnknownRoleIsDecodedForTheResponderToRefuse(): void
    {
        $begin = (new Record(1, 1, "\x00\x09\x00\0\0\0\0\0"))->beginRequest();
        self::assertNull($begin->role());
        self::assertSame(9, $begin->roleId);
        self::assertFalse($begin->keepConnection());
    }

    public function testEncoderRefusesWhatCannotBeOnTheWire(): void
    {
        foreach ([
            static fn() => RecordEncoder::record(6, 1, \str_repeat('x', 65536)),
            static fn() => RecordEncoder::record(0, 1),
            static fn() => RecordEncoder::record(6, 65536),
            static fn() => RecordEncoder::beginRequest(0),
            static fn() => RecordEncoder::endRequest(1, -1),
            static fn() => RecordEncoder::stream(RecordType::EndRequest, 1, 'x'),
            static fn() => RecordEncoder::unknownType(256),
            static fn() => new Record(6, 1, \str_repeat('x', 65536)),
        ] as $i => $encode) {
            try {
                $encode();
                self::fail("Case {$i} must throw");
            } catch (\ValueError) {
                self::addToAssertionCount(1);
            }
        }
    }

    public function testDecoderKeepsBytesOfTheNextRecordAcrossCompaction(): void
    {
        $decoder = new RecordDecoder();
        $big = RecordEncoder::stream(RecordType::Stdout, 1, \str_repeat('a', 70000));
        $decoder->feed($big . \substr(RecordEncoder::endRequest(1), 0, 5));
        self::assertSame(65535, \strlen((string) $decoder->next()?->content));
        self::assertSame(4465, \strlen((string) $decoder->next()?->content));
        self::assertNull($decoder->next());
        self::assertSame(5, $decoder->buffered());
        $decoder->feed(\substr(RecordEncoder::endRequest(1), 5));
        self::assertSame(0, $decoder->next()?->endRequest()->appStatus);
    }
}
