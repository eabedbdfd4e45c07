<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Http\WebSocket;

use Kiln\Http\WebSocket\Internal\Utf8;
use PHPUnit\Framework\TestCase;

final class Utf8Test extends TestCase
{
    public function testAWholePieceLeavesNoTail(): void
    {
        self::assertSame('', Utf8::continue('', 'abc€'));
    }

    public function testACutCharacterIsKeptAsTheTail(): void
    {
        self::assertSame("\xE2\x82", Utf8::continue('', "abc\xE2\x82"));
        self::assertSame('', Utf8::continue("\xE2\x82", "\xACdef"));
    }

    public function testAnInvalidSequenceBeforeACutCharacterIsStillFound(): void
    {
        self::assertNull(Utf8::continue('', "\xC0\x80abc\xE2\x82"));
    }

    public function testAPieceEndingOnAWholeMultiByteCharacterLeavesNoTail(): void
    {
        self::assertSame('', Utf8::continue('', 'ok 😀'));
        self::assertSame('', Utf8::continue("\xF0\x9F", "\x98\x80"));
        self::assertSame('', Utf8::continue('', ''));
        self::assertSame("\xF0\x9F", Utf8::continue("\xF0\x9F", ''));
    }

    public function testStrayContinuationBytesAtTheEndAreInvalid(): void
    {
        self::assertNull(Utf8::continue('', "é\x80"));
        self::assertNull(Utf8::continue('', "a\x80\x80\x80\x80"));
        self::assertNull(Utf8::continue('', "\x80"));
        self::assertNull(Utf8::continue('', "😀\x80"));
    }

    public function testPrefixesFollowTheRangesOfRfc3629(): void
    {
        foreach (["\xC2", "\xDF", "\xE0\xA0", "\xED\x9F", "\xEE\x80", "\xF0\x90\x80", "\xF4\x8F\xBF", "\xF1"] as $prefix) {
            self::assertTrue(Utf8::isPrefix($prefix), bin2hex($prefix));
        }
        foreach (["\x80", "\xC0", "\xC1", "\xE0\x9F", "\xED\xA0", "\xF0\x8F", "\xF4\x90", "\xF5", "\xF0\x90\x7F", "\xC2\x80", "\xE2\x82\xAC"] as $notPrefix) {
            self::assertFalse(Utf8::isPrefix($notPrefix), bin2hex($notPrefix));
        }
    }
}
