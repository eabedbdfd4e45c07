<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\WebSocket;

use Kiln\Tests\Support\ClientScript;
use Kiln\Tests\Support\KilnProcess;
use Kiln\Tests\Support\RawWebSocket;
use PHPUnit\Framework\TestCase;

final class SlowConsumerTest extends TestCase
{
    public function testAClientThatStopsReadingIsClosedWith1008WhileAnotherKeepsReceivingEverything(): void
    {
        // A long close timeout: the slow client still finds the close frame behind what it did not read.
        $kiln = KilnProcess::start(IndependentClientsTest::APP, ['--workers=1', '--limit-ws-write-buffer=65536', '--limit-ws-close-timeout=30']);
        try {
            $slow = new RawWebSocket($kiln, '/ws/feed');
            // 400 broadcasts of 32 KiB: far more than the kernel's socket buffers hold for a client that never reads.
            $fast = ClientScript::python('feed', 'ws://' . $kiln->host() . ':' . $kiln->port() . '/ws/feed', ['400', '32768']);
            self::assertSame(['received' => 400], $fast->next(60.0), $kiln->log());
            $kiln->waitForLog('~closed with 1008: the client does not read~', 5.0);
            $kiln->waitForLog('~feed member closed with 1008~', 5.0);
            [$code, $reason, $data] = $slow->readUntilClose(20.0);
            self::assertSame(1008, $code, 'the close frame follows what was queued before it');
            self::assertStringContainsString('slow consumer', $reason);
            self::assertGreaterThan(0, \count($data));
            self::assertLessThan(400, \count($data), 'what the slow client was sent stopped at the limit');
            self::assertTrue($slow->isClosedWithin(5.0));
        } finally {
            $kiln->stop();
        }
    }
}
