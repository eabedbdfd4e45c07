<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Http\Client;

use Kiln\Http\Client\ClientException;
use Kiln\Http\Client\Internal\ResponseEnd;
use Kiln\Http\Client\Internal\ResponseHead;
use Kiln\Http\Client\Internal\ResponseParser;
use PHPUnit\Framework\Assert;

/**
 * Runs the response parser over an input, once whole and once byte by byte, asserts both runs saw the same
 * events, and returns them: ['head', status, reason, protocol, headers], ['body', bytes] (consecutive pieces
 * joined), ['end', trailers, reusable], ['error', message].
 */
final class ParserHarness
{
    /**
     * @param list<string> $methods one per expected response
     *
     * @return list<list<mixed>>
     */
    public static function parse(string $input, array $methods = ['GET'], bool $eof = true, int $maxHeaderBytes = 65536): array
    {
        $whole = self::run([$input], $methods, $eof, $maxHeaderBytes);
        $bytes = self::run($input === '' ? [] : \str_split($input), $methods, $eof, $maxHeaderBytes);
        Assert::assertEquals($whole, $bytes, 'Feeding byte by byte must give the same events as one feed');

        return $whole;
    }

    public static function assertRejected(string $input, string $messagePart, string $method = 'GET', int $maxHeaderBytes = 65536): void
    {
        $events = self::parse($input, [$method], true, $maxHeaderBytes);
        $last = $events[\array_key_last($events)];
        Assert::assertSame('error', $last[0], 'Expected an error, got ' . \json_encode($events));
        Assert::assertIsString($last[1]);
        Assert::assertStringContainsStringIgnoringCase($messagePart, $last[1]);
    }

    /**
     * @param list<string> $feeds
     * @param list<string> $methods
     *
     * @return list<list<mixed>>
     */
    private static function run(array $feeds, array $methods, bool $eof, int $maxHeaderBytes): array
    {
        $parser = new ResponseParser($maxHeaderBytes);
        $events = [];
        $parser->begin((string) \array_shift($methods));
        try {
            foreach ($feeds as $bytes) {
                $parser->feed($bytes);
                self::drain($parser, $methods, $events);
            }
            if ($eof) {
                $parser->close();
                self::drain($parser, $methods, $events);
            }
        } catch (ClientException $e) {
            $events[] = ['error', $e->getMessage()];
        }

        return $events;
    }

    /**
     * @param list<string> $methods
     * @param list<list<mixed>> $events
     */
    private static function drain(ResponseParser $parser, array &$methods, array &$events): void
    {
        while (($event = $parser->next()) !== null) {
            if ($event instanceof ResponseHead) {
                $events[] = ['head', $event->status, $event->reason, $event->protocol, $event->headers];
            } elseif ($event instanceof ResponseEnd) {
                $events[] = ['end', $event->trailers, $event->reusable];
                if ($methods === []) {
                    return;
                }
                $parser->begin(\array_shift($methods));
            } else {
                Assert::assertNotSame('', $event, 'Body pieces must never be empty');
                $last = \array_key_last($events);
                if ($last !== null && $events[$last][0] === 'body') {
                    $events[$last][1] .= $event;
                } else {
                    $events[] = ['body', $event];
                }
            }
        }
    }
}
