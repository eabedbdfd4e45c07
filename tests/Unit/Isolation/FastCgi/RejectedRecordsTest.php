<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Isolation\FastCgi;

use Kiln\Isolation\FastCgi\ProtocolException;
use Kiln\Isolation\FastCgi\RecordDecoder;
use Kiln\Isolation\FastCgi\RecordEncoder;
use Kiln\Isolation\FastCgi\RecordType;
use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;

/** Malformed FastCGI: each input must end in a ProtocolException naming the problem, whole and at every split. */
final class RejectedRecordsTest extends TestCase
{
    /** @return iterable<string, array{string, string}> */
    public static function rejected(): iterable
    {
        $stdout = RecordEncoder::stream(RecordType::Stdout, 1, 'hello');
        yield 'version 0' => ["\x00\x06\x00\x01\x00\x00\x00\x00", 'version 0'];
        yield 'version 2' => ["\x02\x06\x00\x01\x00\x00\x00\x00", 'version 2'];
        yield 'an HTTP response instead of FastCGI' => ["HTTP/1.1 200 OK\r\n\r\n", 'version 72'];
        yield 'bad version after a good record' => [$stdout . "\x07\x06\x00\x01\x00\x00\x00\x00", 'version 7'];
        yield 'type 0' => ["\x01\x00\x00\x01\x00\x00\x00\x00", 'type 0'];
        yield 'begin request with request id 0' => ["\x01\x01\x00\x00\x00\x08\x00\x00" . \str_repeat("\0", 8), 'non-zero request id'];
        yield 'stdout with request id 0' => ["\x01\x06\x00\x00\x00\x00\x00\x00", 'non-zero request id'];
        yield 'get values with a request id' => ["\x01\x09\x00\x01\x00\x00\x00\x00", 'request id 0'];
        yield 'unknown type with a request id' => ["\x01\x0B\x00\x05\x00\x08\x00\x00" . \str_repeat("\0", 8), 'request id 0'];
        yield 'begin request of 7 bytes' => ["\x01\x01\x00\x01\x00\x07\x01\x00" . \str_repeat("\0", 8), 'must hold 8 bytes'];
        yield 'begin request of 9 bytes' => ["\x01\x01\x00\x01\x00\x09\x07\x00" . \str_repeat("\0", 16), 'must hold 8 bytes'];
        yield 'end request without body' => ["\x01\x03\x00\x01\x00\x00\x00\x00", 'must hold 8 bytes'];
        yield 'abort request with a body' => ["\x01\x02\x00\x01\x00\x01\x07\x00" . \str_repeat("\0", 8), 'must hold 0 bytes'];
        yield 'unknown type with a short body' => ["\x01\x0B\x00\x00\x00\x01\x07\x00" . \str_repeat("\0", 8), 'must hold 8 bytes'];
        yield 'truncated header' => ["\x01\x06\x00\x01\x00", 'ended inside a record (5 bytes'];
        yield 'truncated content' => [\substr($stdout, 0, 10), 'ended inside a record'];
        yield 'truncated padding' => [\substr($stdout, 0, -1), 'ended inside a record'];
        yield 'a complete record then a partial one' => [$stdout . "\x01", 'ended inside a record (1 bytes'];
    }

    #[DataProvider('rejected')]
    public function testMalformedInputIsRejectedWithAClearMessage(string $input, string $message): void
    {
        RecordHarness::assertRejected($input, $message);
    }

    public function testARejectedDecoderStaysRejected(): void
    {
        $decoder = new RecordDecoder();
        $decoder->feed("\x02\x06\x00\x01\x00\x00\x00\x00");
        try {
            $decoder->next();
            self::fail('version 2 must be rejected');
        } catch (ProtocolException $first) {
        }
        $this->expectExceptionObject($first);
        $decoder->feed(RecordEncoder::abortRequest(1));
    }

    public function testRecordsBeforeTheBadOneAreStillReturned(): void
    {
        $events = RecordHarness::decode(RecordEncoder::abortRequest(3) . "\x09");
        self::assertSame([2, 3, ''], $events[0]);
        self::assertSame('error', $events[1][0]);
    }
}
