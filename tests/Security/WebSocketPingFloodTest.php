<?php

declare(strict_types=1);

namespace Kiln\Tests\Security;

use Kiln\Tests\Integration\WebSocket\IndependentClientsTest;
use Kiln\Tests\Support\KilnProcess;
use Kiln\Tests\Support\RawWebSocket;
use PHPUnit\Framework\TestCase;

/**
 * A client that sends pings as fast as it can and never reads the pongs must not make the server queue them
 * without bound: the worker's memory would grow until it died, taking every other connection with it.
 */
final class WebSocketPingFloodTest extends TestCase
{
    /** What the flooding client sends: far more than the kernel's socket buffers of both ends hold. */
    private const FLOOD_BYTES = 48 << 20;

    /** How much the worker's peak memory may grow meanwhile: a small part of the pongs a flood asks for. */
    private const GROWTH_BYTES = 16 << 20;

    public function testAClientFloodingPingsWithoutReadingGetsOnePongForTheLatestAndTheWorkerStaysSmall(): void
    {
        $kiln = KilnProcess::start(IndependentClientsTest::APP, ['--workers=1']);
        try {
            $bystander = new RawWebSocket($kiln, '/ws/echo');
            $flooder = new RawWebSocket($kiln, '/ws/echo');
            [$worker] = $kiln->workerPids();
            $before = self::peakMemory($worker);

            $chunk = str_repeat(RawWebSocket::frame(0x9, str_repeat('p', 125)), 512);
            $pings = 0;
            for ($sent = 0; $sent < self::FLOOD_BYTES; $sent += \strlen($chunk)) {
                $flooder->send($chunk); // throws when the server stops taking them for 5 s
                $pings += 512;
            }
            $flooder->send(RawWebSocket::frame(0x9, 'last'));
            $pings++;

            $bystander->send(RawWebSocket::frame(0x1, 'still there?'));
            self::assertSame('still there?', $bystander->readFrame(10.0)['payload'] ?? null, $kiln->log());
            $grown = self::peakMemory($worker) - $before;
            self::assertLessThan(self::GROWTH_BYTES, $grown, "the worker's peak memory grew by $grown bytes");

            // Reading now, the client gets what the kernel held, then the pong of its last ping.
            $pongs = 0;
            $deadline = microtime(true) + 20.0;
            do {
                $frame = $flooder->readFrame(max(0.01, $deadline - microtime(true)));
                if ($frame === null || $frame['opcode'] !== 0xA) {
                    self::fail('only pongs, on a connection that stays open; got ' . json_encode($frame) . "\n" . $kiln->log());
                }
                $pongs++;
            } while ($frame['payload'] !== 'last');
            self::assertLessThan(intdiv($pings, 2), $pongs, "$pongs pongs for $pings pings: the unread ones were not coalesced");
            $grown = self::peakMemory($worker) - $before; // every ping was read by now
            self::assertLessThan(self::GROWTH_BYTES, $grown, "the worker's peak memory grew by $grown bytes");
            self::assertStringNotContainsString('exited', $kiln->log());
        } finally {
            $kiln->stop();
        }
    }

    /** The process's peak resident memory (VmHWM), in bytes. */
    private static function peakMemory(int $pid): int
    {
        $status = (string) file_get_contents("/proc/$pid/status");
        self::assertMatchesRegularExpression('/^VmHWM:\s+(\d+) kB$/m', $status);
        preg_match('/^VmHWM:\s+(\d+) kB$/m', $status, $m);
        return (int) $m[1] * 1024;
    }
}
