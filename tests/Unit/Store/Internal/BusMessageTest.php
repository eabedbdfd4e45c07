<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Store\Internal;

use Kiln\Server\RelayFrames;
use Kiln\Store\BusException;
use Kiln\Store\Internal\BusMessage;
use PHPUnit\Framework\TestCase;

final class BusMessageTest extends TestCase
{
    public function testChannelAndPayloadComeBackAsTheyWere(): void
    {
        foreach ([['news', 'hello'], ['', ''], ['room:lobby', "\x00\xff binary \n"], [str_repeat('c', 65535), 'p'], ['t', str_repeat('p', 1 << 20)]] as [$channel, $payload]) {
            self::assertSame([$channel, $payload], BusMessage::decode(BusMessage::encode($channel, $payload)));
        }
    }

    public function testTheChannelLengthIsTwoBytesBigEndian(): void
    {
        self::assertSame("\x00\x04newsbody", BusMessage::encode('news', 'body'));
    }

    public function testAChannelPastItsLimitIsRefused(): void
    {
        $this->expectException(BusException::class);
        BusMessage::encode(str_repeat('c', 65536), 'p');
    }

    /** The bound users are told of is the payload's: the channel and its length do not eat into it. */
    public function testAPayloadOfSixteenMebibytesOnTheLongestChannelFitsOneFrameAndOneByteMoreIsRefused(): void
    {
        $channel = str_repeat('c', BusMessage::MAX_CHANNEL);
        $payload = str_repeat('p', 16 << 20);
        $bodies = (new RelayFrames())->feed(RelayFrames::encode(BusMessage::encode($channel, $payload)));
        self::assertCount(1, $bodies);
        self::assertSame([$channel, $payload], BusMessage::decode($bodies[0]));

        $this->expectException(BusException::class);
        $this->expectExceptionMessage("A message to 'c' of 16777217 bytes is over the bound of 16777216 (16 MiB): it was not published");
        BusMessage::encode('c', $payload . 'p');
    }

    public function testBodiesShorterThanTheirChannelAreRefused(): void
    {
        foreach (['', "\x00", "\x00\x05news", "\xff\xff"] as $body) {
            try {
                BusMessage::decode($body);
                self::fail('decoded ' . bin2hex($body));
            } catch (BusException) {
                $this->addToAssertionCount(1);
            }
        }
    }
}
