<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Redis;

use Kiln\Redis\ClusterSlot;
use Kiln\Redis\Internal\CommandKeys;
use PHPUnit\Framework\TestCase;

final class ClusterSlotTest extends TestCase
{
    public function testCrc16IsTheXmodemVariantRedisUses(): void
    {
        self::assertSame(0x31C3, ClusterSlot::crc16('123456789'));
        self::assertSame(0, ClusterSlot::crc16(''));
    }

    public function testKnownKeysLandInTheSlotsRedisGivesThem(): void
    {
        // CLUSTER KEYSLOT foo = 12182, bar = 5061, hello = 866 (Redis 7)
        self::assertSame(12182, ClusterSlot::of('foo'));
        self::assertSame(5061, ClusterSlot::of('bar'));
        self::assertSame(866, ClusterSlot::of('hello'));
    }

    public function testAHashTagDecidesTheSlot(): void
    {
        self::assertSame(ClusterSlot::of('user1000'), ClusterSlot::of('{user1000}.following'));
        self::assertSame(ClusterSlot::of('{user1000}.followers'), ClusterSlot::of('{user1000}.following'));
        self::assertSame(ClusterSlot::of('{}x'), ClusterSlot::crc16('{}x') & 16383, 'an empty tag is no tag');
        self::assertSame(ClusterSlot::of('a{b}{c}'), ClusterSlot::of('b'), 'the first tag counts');
    }

    public function testCommandsAreRoutedByTheirFirstKey(): void
    {
        self::assertSame('k', CommandKeys::routingKey(['GET', 'k']));
        self::assertSame('k1', CommandKeys::routingKey(['EVALSHA', 'abc', 2, 'k1', 'k2', 'arg']));
        self::assertNull(CommandKeys::routingKey(['EVAL', 'return 1', 0]));
        self::assertSame('s1', CommandKeys::routingKey(['XREADGROUP', 'GROUP', 'g', 'c', 'COUNT', 1, 'STREAMS', 's1', '>']));
        self::assertSame('s', CommandKeys::routingKey(['XGROUP', 'CREATE', 's', 'g', '$']));
        self::assertNull(CommandKeys::routingKey(['PING']));
        self::assertNull(CommandKeys::routingKey(['publish', 'ch', 'm']));
    }
}
