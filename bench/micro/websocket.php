<?php

declare(strict_types=1);

/**
 * WebSocket protocol micro-benchmark, no sockets: frames/s through Protocol::feed() (client frames, masked)
 * and Protocol::encodeMessage() (server frames), for the echo benchmark's 32-byte text message one frame per
 * read and 16 frames per read, a 4 KiB binary message, and the same with permessage-deflate. Best of 5 rounds.
 * Usage: php -d opcache.enable_cli=1 -d opcache.jit_buffer_size=64M -d opcache.jit=tracing \
 *        bench/micro/websocket.php [seconds per round, default 0.5]
 */

use Kiln\Http\WebSocket\PerMessageDeflate;
use Kiln\Http\WebSocket\Protocol;
use Kiln\Http\WebSocket\WebSocketLimits;

require __DIR__ . '/../lib/autoload.php';

$seconds = (float) ($argv[1] ?? 0.5);
$rounds = 5;

/** A masked client frame with FIN set; $b0 without FIN. */
function clientFrame(int $opcode, string $payload, int $rsv = 0): string
{
    $mask = random_bytes(4);
    $size = strlen($payload);
    $head = chr(0x80 | $rsv | $opcode) . ($size < 126 ? chr(0x80 | $size) : "\xFE" . pack('n', $size));
    return $head . $mask . ($payload ^ str_repeat($mask, intdiv($size, 4) + 1));
}

/**
 * Runs $once (which handles $perCall frames) for $seconds, $rounds times; returns the best frames/s.
 *
 * @param Closure(): void $once
 */
function best(Closure $once, int $perCall, float $seconds, int $rounds): float
{
    $best = 0.0;
    for ($round = 0; $round < $rounds; $round++) {
        $calls = 0;
        $start = hrtime(true);
        $deadline = $start + (int) ($seconds * 1e9);
        do {
            for ($i = 0; $i < 1000; $i++) {
                $once();
            }
            $calls += 1000;
            $now = hrtime(true);
        } while ($now < $deadline);
        $best = max($best, $calls * $perCall / (($now - $start) / 1e9));
    }
    return $best;
}

$text32 = str_repeat('0123456789abcdef', 2);
$binary4k = random_bytes(4096);
$one = clientFrame(1, $text32);
$sixteen = str_repeat($one, 16);
$big = clientFrame(2, $binary4k);

$cases = [];
$protocol = new Protocol();
$cases['parse  32 B text, 1 frame/read'] = [static function () use ($protocol, $one): void {
    $protocol->feed($one);
}, 1];
$cases['parse  32 B text, 16 frames/read'] = [static function () use ($protocol, $sixteen): void {
    $protocol->feed($sixteen);
}, 16];
$cases['parse  4 KiB binary'] = [static function () use ($protocol, $big): void {
    $protocol->feed($big);
}, 1];
$cases['encode 32 B text'] = [static function () use ($protocol, $text32): void {
    $protocol->encodeMessage($text32, false);
}, 1];
$cases['encode 4 KiB binary'] = [static function () use ($protocol, $binary4k): void {
    $protocol->encodeMessage($binary4k, true);
}, 1];
$cases['echo   32 B text (parse + encode)'] = [static function () use ($protocol, $one): void {
    foreach ($protocol->feed($one) as $message) {
        \assert($message instanceof Kiln\Http\WebSocket\Message);
        $protocol->encodeMessage($message->payload, $message->binary);
    }
}, 1];
if (function_exists('deflate_init')) {
    $client = deflate_init(ZLIB_ENCODING_RAW);
    assert($client !== false);
    $compressed = [];
    for ($i = 0; $i < 1000; $i++) { // a client with context takeover: a stream of messages, replayed in order
        $compressed[] = clientFrame(1, substr((string) deflate_add($client, $text32, ZLIB_SYNC_FLUSH), 0, -4), 0x40);
    }
    $deflated = new Protocol(new WebSocketLimits(), new PerMessageDeflate(clientNoContextTakeover: false));
    $cases['deflate echo 32 B text, fresh state per 1000'] = [static function () use (&$deflated, $compressed): void {
        $deflated = new Protocol(new WebSocketLimits(), new PerMessageDeflate());
        foreach ($compressed as $frame) {
            foreach ($deflated->feed($frame) as $message) {
                \assert($message instanceof Kiln\Http\WebSocket\Message);
                $deflated->encodeMessage($message->payload, $message->binary);
            }
        }
    }, 1000];
}

printf("PHP %s, JIT %s\n", PHP_VERSION, ini_get('opcache.jit') ?: 'off');
foreach ($cases as $name => [$once, $perCall]) {
    $rate = best($once, $perCall, $perCall > 100 ? $seconds * 4 : $seconds, $perCall > 100 ? 2 : $rounds);
    printf("%-46s %12s frames/s  %6.3f µs/frame\n", $name, number_format($rate), 1e6 / $rate);
}
