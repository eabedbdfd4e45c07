<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Http\WebSocket;

use Kiln\Http\WebSocket\Close;
use Kiln\Http\WebSocket\Message;
use Kiln\Http\WebSocket\PerMessageDeflate;
use Kiln\Http\WebSocket\Ping;
use Kiln\Http\WebSocket\Pong;
use Kiln\Http\WebSocket\Protocol;
use Kiln\Http\WebSocket\ProtocolViolation;
use Kiln\Http\WebSocket\WebSocketLimits;
use PHPUnit\Framework\Assert;

/**
 * Builds client frames and runs Protocol over them twice, the whole input in one feed and then one byte at
 * a time, asserting both runs give the same events. Events are normalised to arrays:
 * ['text'|'binary', payload], ['ping'|'pong', payload], ['close', code, reason], ['violation', code].
 */
final class FrameHarness
{
    public const MASK = "\x37\xfa\x21\x3d";

    /**
     * A client frame. $b0 is the first byte (FIN, RSV, opcode). $lengthForm forces the length encoding:
     * 7, 16 or 64 bits (null: the shortest).
     */
    public static function frame(int $b0, string $payload, ?string $mask = self::MASK, ?int $lengthForm = null): string
    {
        $size = \strlen($payload);
        $lengthForm ??= $size < 126 ? 7 : ($size < 65536 ? 16 : 64);
        $maskBit = $mask === null ? 0 : 0x80;
        $head = \chr($b0) . match ($lengthForm) {
            7 => \chr($maskBit | $size),
            16 => \chr($maskBit | 126) . pack('n', $size),
            default => \chr($maskBit | 127) . pack('J', $size),
        };
        if ($mask === null) {
            return $head . $payload;
        }
        $masked = '';
        for ($i = 0; $i < $size; $i++) {
            $masked .= $payload[$i] ^ $mask[$i % 4]; // the plain way, to check the parser's string XOR
        }
        return $head . $mask . $masked;
    }

    public static function text(string $payload, bool $fin = true): string
    {
        return self::frame(($fin ? 0x80 : 0) | 1, $payload);
    }

    public static function binary(string $payload, bool $fin = true): string
    {
        return self::frame(($fin ? 0x80 : 0) | 2, $payload);
    }

    public static function continuation(string $payload, bool $fin = true): string
    {
        return self::frame(($fin ? 0x80 : 0), $payload);
    }

    public static function close(?int $code = null, string $reason = ''): string
    {
        return self::frame(0x88, $code === null ? '' : pack('n', $code) . $reason);
    }

    /**
     * Parses $input both ways and returns the events. $deflate makes a fresh PerMessageDeflate per run.
     *
     * @param (\Closure(): PerMessageDeflate)|null $deflate
     * @return list<array{0: string, 1: string|int, 2?: string}>
     */
    public static function parse(string $input, ?WebSocketLimits $limits = null, ?\Closure $deflate = null): array
    {
        $whole = self::run([$input], $limits, $deflate);
        $bytes = self::run($input === '' ? [] : str_split($input), $limits, $deflate);
        Assert::assertSame($whole, $bytes, 'Feeding byte by byte must give the same events as one feed');
        return $whole;
    }

    /**
     * Asserts that parsing ends in a ProtocolViolation with $code, both ways, and returns the events before it.
     *
     * @param (\Closure(): PerMessageDeflate)|null $deflate
     * @return list<array{0: string, 1: string|int, 2?: string}>
     */
    public static function assertViolation(int $code, string $input, ?WebSocketLimits $limits = null, ?\Closure $deflate = null): array
    {
        $events = self::parse($input, $limits, $deflate);
        $last = array_pop($events);
        Assert::assertSame(['violation', $code], $last, 'Got ' . json_encode($last, \JSON_INVALID_UTF8_SUBSTITUTE));
        return $events;
    }

    /**
     * @param list<string> $feeds
     * @param (\Closure(): PerMessageDeflate)|null $deflate
     * @return list<array{0: string, 1: string|int, 2?: string}>
     */
    public static function run(array $feeds, ?WebSocketLimits $limits = null, ?\Closure $deflate = null): array
    {
        $protocol = new Protocol($limits ?? new WebSocketLimits(), $deflate === null ? null : $deflate());
        $events = [];
        $ended = false;
        foreach ($feeds as $bytes) {
            $out = $protocol->feed($bytes);
            if ($ended) {
                Assert::assertSame([], $out, 'Nothing may be parsed after a Close or a ProtocolViolation');
            }
            foreach ($out as $event) {
                Assert::assertFalse($ended, 'No event may follow a Close or a ProtocolViolation');
                $events[] = self::normalise($event);
                $ended = $event instanceof Close || $event instanceof ProtocolViolation;
            }
        }
        Assert::assertSame($ended, $protocol->ended());
        return $events;
    }

    /** @return array{0: string, 1: string|int, 2?: string} */
    private static function normalise(Message|Ping|Pong|Close|ProtocolViolation $event): array
    {
        return match (true) {
            $event instanceof Message => [$event->binary ? 'binary' : 'text', $event->payload],
            $event instanceof Ping => ['ping', $event->payload],
            $event instanceof Pong => ['pong', $event->payload],
            $event instanceof Close => ['close', $event->code, $event->reason],
            default => ['violation', $event->code],
        };
    }
}
