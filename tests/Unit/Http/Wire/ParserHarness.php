<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Http\Wire;

use Kiln\Http\Limits;
use Kiln\Http\Wire\BodyChunk;
use Kiln\Http\Wire\MessageEnd;
use Kiln\Http\Wire\ParseException;
use Kiln\Http\Wire\RequestHead;
use Kiln\Http\Wire\RequestParser;
use PHPUnit\Framework\Assert;

/**
 * Runs a parser over an input and records what came out, normalised so that a whole-buffer run and a
 * byte-at-a-time run can be compared: consecutive BodyChunks are joined into one 'body' event.
 */
final class ParserHarness
{
    /**
     * Parses $input both ways, asserts both runs saw the same thing, and returns the events.
     *
     * @return list<array{0: string, 1?: mixed, 2?: mixed}>
     */
    public static function parse(string $input, ?Limits $limits = null): array
    {
        $limits ??= new Limits();
        $whole = self::run([$input], $limits);
        $bytes = self::run($input === '' ? [] : str_split($input), $limits);
        Assert::assertEquals($whole, $bytes, 'Feeding byte by byte must give the same result as one feed');
        return $whole;
    }

    public static function head(string $input, ?Limits $limits = null): RequestHead
    {
        $events = self::parse($input, $limits);
        Assert::assertSame('head', $events[0][0], 'Expected a head, got ' . json_encode($events[0], \JSON_INVALID_UTF8_SUBSTITUTE));
        Assert::assertInstanceOf(RequestHead::class, $events[0][1]);
        return $events[0][1];
    }

    /** Asserts that parsing ends in a ParseException with $status, both ways. */
    public static function assertRejected(int $status, string $input, ?Limits $limits = null): void
    {
        $events = self::parse($input, $limits);
        $last = $events[array_key_last($events)];
        Assert::assertSame(['error', $status], [$last[0], $last[1] ?? null], 'Got ' . json_encode($last, \JSON_INVALID_UTF8_SUBSTITUTE));
    }

    /**
     * @param list<string> $feeds
     * @return list<array{0: string, 1?: mixed, 2?: mixed}>
     */
    public static function run(array $feeds, Limits $limits): array
    {
        $parser = new RequestParser($limits);
        $events = [];
        try {
            foreach ($feeds as $bytes) {
                $parser->feed($bytes);
                while (($item = $parser->next()) !== null) {
                    self::record($events, $item);
                }
            }
        } catch (ParseException $error) {
            $events[] = ['error', $error->status, $error->getMessage()];
            return $events;
        }
        $events[] = ['rest', $parser->buffered(), $parser->isIdle()];
        return $events;
    }

    /** @param list<array{0: string, 1?: mixed, 2?: mixed}> $events */
    private static function record(array &$events, RequestHead|BodyChunk|MessageEnd $item): void
    {
        if ($item instanceof RequestHead) {
            $events[] = ['head', $item];
            return;
        }
        if ($item instanceof MessageEnd) {
            $events[] = ['end', $item->trailers];
            return;
        }
        Assert::assertNotSame('', $item->data, 'A BodyChunk is never empty');
        $last = array_key_last($events);
        if ($last !== null && $events[$last][0] === 'body') {
            $events[$last][1] .= $item->data;
            return;
        }
        $events[] = ['body', $item->data];
    }
}
