<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Http\WebSocket;

use Kiln\Http\WebSocket\Protocol;
use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;

/** RFC 6455 §5.5.1 and §7.4: the close frame, its code and its reason, received and sent. */
final class ProtocolCloseTest extends TestCase
{
    public function testACloseWithoutPayloadReportsNoStatus1005(): void
    {
        self::assertSame([['close', 1005, '']], FrameHarness::parse(FrameHarness::close()));
    }

    public function testACloseCarriesItsCodeAndReason(): void
    {
        self::assertSame([['close', 1001, 'going away €']], FrameHarness::parse(FrameHarness::close(1001, 'going away €')));
    }

    public function testACloseWithAOneBytePayloadIsAProtocolError(): void
    {
        FrameHarness::assertViolation(1002, FrameHarness::frame(0x88, "\x03"));
    }

    /** @return iterable<string, array{int}> */
    public static function acceptedCodes(): iterable
    {
        foreach ([1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 1012, 1013, 1014, 3000, 3999, 4000, 4999] as $code) {
            yield (string) $code => [$code];
        }
    }

    /** @return iterable<string, array{int}> */
    public static function refusedCodes(): iterable
    {
        foreach ([0, 1, 999, 1004, 1005, 1006, 1015, 1016, 1100, 2000, 2999, 5000, 65535] as $code) {
            yield (string) $code => [$code];
        }
    }

    #[DataProvider('acceptedCodes')]
    public function testAValidCloseCodeIsAccepted(int $code): void
    {
        self::assertSame([['close', $code, '']], FrameHarness::parse(FrameHarness::close($code)));
    }

    #[DataProvider('refusedCodes')]
    public function testACloseCodeOneMayNotSendIsAProtocolError(int $code): void
    {
        FrameHarness::assertViolation(1002, FrameHarness::close($code));
    }

    public function testACloseReasonThatIsNotUtf8IsInvalidData(): void
    {
        FrameHarness::assertViolation(1007, FrameHarness::close(1000, "bad \xC0\x80"));
        FrameHarness::assertViolation(1007, FrameHarness::close(1000, "cut \xE2\x82"));
    }

    public function testEncodeCloseWritesTheCodeAndReason(): void
    {
        self::assertSame("\x88\x05\x03\xE8bye", (new Protocol())->encodeClose(1000, 'bye'));
        self::assertSame("\x88\x02\x03\xE8", (new Protocol())->encodeClose());
        self::assertSame("\x88\x02\x0F\xA0", (new Protocol())->encodeClose(4000));
    }

    public function testEncodeCloseWith1005WritesACloseWithoutPayload(): void
    {
        self::assertSame("\x88\x00", (new Protocol())->encodeClose(1005));
    }

    #[DataProvider('refusedCodes')]
    public function testEncodeCloseRefusesACodeOneMayNotSend(int $code): void
    {
        $this->expectException(\ValueError::class);
        (new Protocol())->encodeClose($code, $code === 1005 ? 'a reason needs a code' : '');
    }

    public function testEncodeCloseAcceptsAReasonOf123BytesAndRefuses124(): void
    {
        $frame = (new Protocol())->encodeClose(1000, str_repeat('r', 123));
        self::assertSame(127, \strlen($frame));
        $this->expectException(\ValueError::class);
        (new Protocol())->encodeClose(1000, str_repeat('r', 124));
    }

    public function testEncodeCloseRefusesAReasonThatIsNotUtf8(): void
    {
        $this->expectException(\ValueError::class);
        (new Protocol())->encodeClose(1000, "\xFF");
    }
}
