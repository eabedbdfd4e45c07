<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Http\Realtime\Internal;

use Kiln\Http\Realtime\Internal\StreamId;
use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;

final class StreamIdTest extends TestCase
{
    public function testAnIdNamesEachTopicsPositionAndReadsBackWhateverTheOrder(): void
    {
        $id = StreamId::encode(['account-7' => 5, 'announcements' => 0]);
        self::assertSame(StreamId::tag('account-7') . ':5.' . StreamId::tag('announcements') . ':0', $id);
        self::assertMatchesRegularExpression('/\A[0-9a-z.:]+\z/', $id, 'safe in a header and an id: line');
        self::assertSame(['announcements' => 0, 'account-7' => 5], StreamId::decode($id, ['announcements', 'account-7']));
    }

    public function testTheTagIsTheSameOnEveryWorkerAndNode(): void
    {
        self::assertSame(base_convert(hash('crc32b', 'news'), 16, 36), StreamId::tag('news'));
        self::assertLessThanOrEqual(7, \strlen(StreamId::tag('a topic with a long name' . str_repeat('x', 500))));
    }

    public function testAStreamThatFollowsFewerTopicsNowTakesThePositionsOfThoseItStillFollows(): void
    {
        $id = StreamId::encode(['a' => 3, 'b' => 9]);
        self::assertSame(['b' => 9], StreamId::decode($id, ['b']));
        self::assertSame(['a' => 3], StreamId::decode($id, ['a', 'c']));
    }

    public function testAPlainNumberIsAPositionOnlyForAStreamThatFollowsOneTopic(): void
    {
        self::assertSame(['news' => 12], StreamId::decode('12', ['news']));
        self::assertSame([], StreamId::decode('12', ['news', 'sport']), 'it does not say which topic counted it');
        self::assertSame([], StreamId::decode('1234567890123456789', ['news']), 'past an int');
    }

    public function testAnIdNamesAtMostMaxTopicsAndStaysWithinMaxLength(): void
    {
        $positions = [];
        foreach (range(1, StreamId::MAX_TOPICS + 5) as $i) {
            $positions["topic-$i"] = 999_999_999_999_999_999;
        }
        $id = StreamId::encode($positions);
        self::assertCount(StreamId::MAX_TOPICS, explode('.', $id));
        self::assertLessThanOrEqual(StreamId::MAX_LENGTH, \strlen($id));
        $decoded = StreamId::decode($id, array_keys($positions));
        self::assertCount(StreamId::MAX_TOPICS, $decoded);
        self::assertArrayNotHasKey('topic-' . (StreamId::MAX_TOPICS + 1), $decoded);
    }

    public function testTwoTopicsOfOneStreamWithOneTagAreNeitherKnown(): void
    {
        self::assertSame(StreamId::tag('t928096'), StreamId::tag('t11200040'), 'a CRC-32 collision');
        $id = StreamId::encode(['t928096' => 4, 't11200040' => 8, 'other' => 2]);
        self::assertSame(['other' => 2], StreamId::decode($id, ['t928096', 't11200040', 'other']));
    }

    /** @return iterable<string, array{string}> */
    public static function foreignIds(): iterable
    {
        yield 'empty' => [''];
        yield 'a word' => ['abc'];
        yield 'no position' => [StreamId::tag('a') . ':'];
        yield 'a tag too long' => ['abcdefgh:1'];
        yield 'a position too long' => [StreamId::tag('a') . ':' . str_repeat('9', 19)];
        yield 'negative' => [StreamId::tag('a') . ':-1'];
        yield 'upper case' => [strtoupper(StreamId::tag('a')) . 'Z:1'];
        yield 'a trailing dot' => [StreamId::tag('a') . ':1.'];
        yield 'a comma' => [StreamId::tag('a') . ':1,' . StreamId::tag('b') . ':2'];
        yield 'spaces' => [' ' . StreamId::tag('a') . ':1'];
        yield 'a line feed' => [StreamId::tag('a') . ":1\n"];
        yield 'NUL' => [StreamId::tag('a') . ":1\0"];
        yield 'over the length' => [implode('.', array_fill(0, StreamId::MAX_TOPICS + 1, StreamId::tag('a') . ':1'))];
        yield 'ten thousand bytes' => [str_repeat('1', 10_000)];
        yield 'named twice' => [StreamId::tag('a') . ':1.' . StreamId::tag('a') . ':2'];
        yield 'other topics' => [StreamId::encode(['x' => 1, 'y' => 2])];
    }

    #[DataProvider('foreignIds')]
    public function testAForeignOrMalformedIdGivesNoPosition(string $id): void
    {
        self::assertSame([], StreamId::decode($id, ['a', 'b']));
    }
}
