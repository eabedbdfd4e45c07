<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Http\Sse;

use Kiln\Http\Sse\EventEncoder;
use Kiln\Tests\Support\SseParser;
use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;

final class EventEncoderTest extends TestCase
{
    public function testAnEventWithEveryFieldIsEncodedInOrderAndEndsWithAnEmptyLine(): void
    {
        self::assertSame(
            "event: update\nid: 42\nretry: 3000\ndata: hello\n\n",
            EventEncoder::event('hello', 'update', '42', 3000),
        );
    }

    public function testPlainDataIsOneDataLine(): void
    {
        self::assertSame("data: hello world\n\n", EventEncoder::event('hello world'));
    }

    public function testEmptyDataIsStillAnEvent(): void
    {
        self::assertSame("data: \n\n", EventEncoder::event(''));
    }

    public function testDataIsSplitOnCrlfCrAndLfIntoDataLines(): void
    {
        self::assertSame(
            "data: one\ndata: two\ndata: three\ndata: \ndata: four\n\n",
            EventEncoder::event("one\r\ntwo\rthree\n\nfour"),
        );
    }

    public function testDataEndingWithALineBreakKeepsAnEmptyLastLine(): void
    {
        self::assertSame("data: x\ndata: \n\n", EventEncoder::event("x\n"));
    }

    public function testACommentIsOneLineStartingWithAColon(): void
    {
        self::assertSame(": keep going\n", EventEncoder::comment('keep going'));
        self::assertSame(":\n", EventEncoder::comment(''));
    }

    public function testRetryAloneIsAFieldAndAnEmptyLine(): void
    {
        self::assertSame("retry: 1500\n\n", EventEncoder::retry(1500));
    }

    public function testTheHeartbeatIsAComment(): void
    {
        $parser = new SseParser();
        $parser->feed(EventEncoder::HEARTBEAT);
        self::assertSame([], $parser->events());
        self::assertSame(['heartbeat'], $parser->comments());
        self::assertTrue($parser->isBetweenEvents());
    }

    /** @return iterable<string, array{\Closure(): string}> */
    public static function refused(): iterable
    {
        yield 'LF in an event name' => [static fn(): string => EventEncoder::event('x', "a\nb")];
        yield 'CR in an event name' => [static fn(): string => EventEncoder::event('x', "a\rb")];
        yield 'an empty event name' => [static fn(): string => EventEncoder::event('x', '')];
        yield 'LF in an id' => [static fn(): string => EventEncoder::event('x', null, "1\n2")];
        yield 'CR in an id' => [static fn(): string => EventEncoder::event('x', null, "1\r")];
        yield 'NUL in an id' => [static fn(): string => EventEncoder::event('x', null, "1\0")];
        yield 'a negative retry' => [static fn(): string => EventEncoder::event('x', null, null, -1)];
        yield 'a negative retry alone' => [static fn(): string => EventEncoder::retry(-5)];
        yield 'LF in a comment' => [static fn(): string => EventEncoder::comment("a\ndata: forged")];
        yield 'CR in a comment' => [static fn(): string => EventEncoder::comment("a\rb")];
    }

    /** @param \Closure(): string $encode */
    #[DataProvider('refused')]
    public function testValuesThatWouldBreakTheFramingAreRefused(\Closure $encode): void
    {
        $this->expectException(\ValueError::class);
        $encode();
    }

    /** @return iterable<string, array{string, ?string, ?string}> */
    public static function roundTrips(): iterable
    {
        yield 'plain' => ['hello', null, null];
        yield 'typed with id' => ['{"a":1}', 'json', '7'];
        yield 'CRLF lines' => ["a\r\nb\r\nc", 'multi', '8'];
        yield 'CR lines' => ["a\rb", null, '9'];
        yield 'blank lines inside' => ["a\n\n\nb", null, null];
        yield 'leading space kept' => ['  indented', null, null];
        yield 'colons in data' => ['data: not a field', 'x', 'y:z'];
        yield 'unicode' => ['héllo ✓', 'ünï', 'ïd'];
        yield 'empty' => ['', null, null];
    }

    #[DataProvider('roundTrips')]
    public function testAClientReadsBackTheSameEventWholeAndByteByByte(string $data, ?string $event, ?string $id): void
    {
        $bytes = EventEncoder::comment('before') . EventEncoder::event($data, $event, $id) . EventEncoder::event('next');
        $expected = str_replace(["\r\n", "\r"], "\n", $data);
        foreach ([[$bytes], str_split($bytes)] as $pieces) {
            $parser = new SseParser();
            foreach ($pieces as $piece) {
                $parser->feed($piece);
            }
            $events = $parser->events();
            self::assertCount(2, $events);
            self::assertSame(['event' => $event ?? 'message', 'data' => $expected, 'id' => $id ?? ''], $events[0]);
            self::assertSame(['event' => 'message', 'data' => 'next', 'id' => $id ?? ''], $events[1]);
            self::assertSame(['before'], $parser->comments());
            self::assertTrue($parser->isBetweenEvents());
        }
    }

    public function testRetryIsReadBackByAClient(): void
    {
        $parser = new SseParser();
        foreach (str_split(EventEncoder::retry(2500) . EventEncoder::event('x', null, null, 700)) as $byte) {
            $parser->feed($byte);
        }
        self::assertSame(700, $parser->retry());
        self::assertCount(1, $parser->events());
    }
}
