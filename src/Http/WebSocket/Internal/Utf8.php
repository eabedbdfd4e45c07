<?php

declare(strict_types=1);

namespace Kiln\Http\WebSocket\Internal;

/**
 * UTF-8 checks for text messages, whole or in pieces. PCRE's UTF check (preg_match('//u')) does the work on
 * whole sequences; this class only deals with a sequence cut at the end of a piece.
 *
 * @internal
 */
final class Utf8
{
    public static function isValid(string $bytes): bool
    {
        return preg_match('//u', $bytes) === 1;
    }

    /**
     * Checks the next piece of a text, $tail being what the previous piece left unfinished. Returns the new
     * unfinished tail ('' when the piece ended on a whole character), or null at the first byte sequence
     * that can never become valid, whatever comes next.
     */
    public static function continue(string $tail, string $piece): ?string
    {
        $data = $tail === '' ? $piece : $tail . $piece;
        $length = \strlen($data);
        if ($length === 0 || \ord($data[$length - 1]) < 0x80) {
            return preg_match('//u', $data) === 1 ? '' : null;
        }
        // The piece ends inside or at the end of a multi-byte character: find its lead byte, then check the
        // text before it and the character apart, so the text is scanned once.
        for ($i = $length - 1; $i >= 0 && $i >= $length - 4; $i--) {
            $lead = \ord($data[$i]);
            if ($lead < 0x80) {
                return null; // a continuation byte after ASCII
            }
            if ($lead < 0xC0) {
                continue;
            }
            if ($length - $i >= ($lead >= 0xF0 ? 4 : ($lead >= 0xE0 ? 3 : 2))) {
                return preg_match('//u', $data) === 1 ? '' : null; // the last character is whole
            }
            $cut = substr($data, $i);
            if (!self::isPrefix($cut) || ($i > 0 && preg_match('//u', substr($data, 0, $i)) !== 1)) {
                return null;
            }
            return $cut;
        }
        return null;
    }

    /**
     * Whether $bytes (one to three bytes, a lead byte first) can begin a valid character but does not yet
     * make one: no overlong form (C0, C1, E0 80-9F, F0 80-8F), no surrogate (ED A0-BF), nothing past
     * U+10FFFF (F4 90-BF, F5-FF).
     */
    public static function isPrefix(string $bytes): bool
    {
        $lead = \ord($bytes[0]);
        $need = $lead >= 0xF0 ? 4 : ($lead >= 0xE0 ? 3 : 2);
        $length = \strlen($bytes);
        if ($lead < 0xC2 || $lead > 0xF4 || $length >= $need) {
            return false;
        }
        if ($length >= 2) {
            $second = \ord($bytes[1]);
            [$low, $high] = match ($lead) {
                0xE0 => [0xA0, 0xBF],
                0xED => [0x80, 0x9F],
                0xF0 => [0x90, 0xBF],
                0xF4 => [0x80, 0x8F],
                default => [0x80, 0xBF],
            };
            if ($second < $low || $second > $high) {
                return false;
            }
        }
        if ($length === 3) {
            $third = \ord($bytes[2]);
            if ($third < 0x80 || $third > 0xBF) {
                return false;
            }
        }
        return true;
    }
}
