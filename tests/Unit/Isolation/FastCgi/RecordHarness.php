<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Isolation\FastCgi;

use Kiln\Isolation\FastCgi\ProtocolException;
use Kiln\Isolation\FastCgi\RecordDecoder;
use PHPUnit\Framework\Assert;

/**
 * Runs the record decoder over an input whole, one byte at a time, and (for inputs up to 4 KiB) split in
 * two at every offset; asserts every run saw the same events and returns them: [type, requestId, content]
 * per record, then ['error', message] if the input was rejected (also at the end of the stream).
 */
final class RecordHarness
{
    /** @return list<array{0: int|string, 1: int|string, 2?: string}> */
    public static function decode(string $input): array
    {
        $whole = self::run([$input]);
        $bytes = $input === '' ? [] : \str_split($input);
        Assert::assertSame($whole, self::run($bytes), 'Byte by byte must give the same records as one feed');
        Assert::assertSame($whole, self::run([$input], raw: true), 'nextContent() must give what next() gives');
        Assert::assertSame($whole, self::run($bytes, raw: true), 'nextContent() byte by byte must give what next() gives');
        if (\strlen($input) <= 4096) {
            for ($at = 1; $at < \strlen($input); $at++) {
                $split = self::run([\substr($input, 0, $at), \substr($input, $at)]);
                Assert::assertSame($whole, $split, "Split at byte {$at} must give the same records as one feed");
            }
        }

        return $whole;
    }

    public static function assertRejected(string $input, string $messagePart): void
    {
        $events = self::decode($input);
        $last = $events[\array_key_last($events)] ?? null;
        Assert::assertNotNull($last);
        Assert::assertSame('error', $last[0], 'Expected a rejection, got ' . \json_encode($events, \JSON_INVALID_UTF8_SUBSTITUTE));
        Assert::assertIsString($last[1]);
        Assert::assertStringContainsStringIgnoringCase($messagePart, $last[1]);
    }

    /**
     * @param list<string> $feeds
     * @param bool $raw read with nextContent() instead of next()
     *
     * @return list<array{0: int|string, 1: int|string, 2?: string}>
     */
    private static function run(array $feeds, bool $raw = false): array
    {
        $decoder = new RecordDecoder();
        $events = [];
        try {
            foreach ($feeds as $bytes) {
                $decoder->feed($bytes);
                if ($raw) {
                    $type = $requestId = -1;
                    while (($content = $decoder->nextContent($type, $requestId)) !== null) {
                        $events[] = [$type, $requestId, $content];
                    }
                    continue;
                }
                while (($record = $decoder->next()) !== null) {
                    $events[] = [$record->type, $record->requestId, $record->content];
                }
            }
            $decoder->close();
            Assert::assertSame(0, $decoder->buffered());
        } catch (ProtocolException $e) {
            $events[] = ['error', $e->getMessage()];
        }

        return $events;
    }
}
