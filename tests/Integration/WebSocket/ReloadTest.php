<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\WebSocket;

use Kiln\Tests\Support\ClientScript;
use Kiln\Tests\Support\HttpClient;
use Kiln\Tests\Support\KilnProcess;
use Kiln\Tests\Support\RawWebSocket;
use PHPUnit\Framework\TestCase;

/** Graceful reload and stop with WebSocket connections open. */
final class ReloadTest extends TestCase
{
    public function testOnReloadOldConnectionsKeepWorkingThenGet1001AtTheDeadlineAndNewOnesLandOnNewWorkers(): void
    {
        $kiln = KilnProcess::start(IndependentClientsTest::APP, ['--workers=2', '--drain-timeout=8']);
        try {
            $url = 'ws://' . $kiln->host() . ':' . $kiln->port() . '/ws/echo';
            $oldPids = $kiln->workerPids();
            $old = [];
            for ($i = 0; $i < 4; $i++) {
                $old[] = ClientScript::python('hold', $url, ['0.05']);
            }
            foreach ($old as $client) {
                self::assertContains($client->next()['pid'], $oldPids);
            }
            $raw = new RawWebSocket($kiln, '/ws/echo');

            $kiln->signal(SIGHUP);
            $kiln->waitForLog('~reloaded: generation 2 serving, generation 1 draining~', 15.0);

            $new = [];
            for ($i = 0; $i < 4; $i++) {
                $new[] = ClientScript::python('hold', $url, ['0.05']);
            }
            foreach ($new as $client) {
                self::assertNotContains($client->next()['pid'], $oldPids, 'a connection made after the reload is served by a new worker');
            }
            self::assertSame(200, HttpClient::get($kiln->baseUrl() . '/')['status']);

            // A connection of an old worker still works while it drains.
            $raw->send(RawWebSocket::frame(0x1, 'still served'));
            self::assertSame('still served', $raw->readFrame()['payload'] ?? null);

            foreach ($old as $client) {
                $end = $client->next(15.0);
                self::assertSame(1001, $end['close_code'], json_encode($end) ?: '');
                self::assertSame(0, $end['wrong']);
            }
            self::assertSame(1001, $raw->readUntilClose(15.0)[0]);

            // The old workers leave once their connections are gone, before their deadline cuts anything.
            $deadline = microtime(true) + 10.0;
            while (array_intersect($oldPids, $kiln->workerPids()) !== [] && microtime(true) < $deadline) {
                usleep(50_000);
            }
            self::assertSame([], array_intersect($oldPids, $kiln->workerPids()), 'the old workers exited');
            self::assertStringNotContainsString('drain deadline', $kiln->log());

            // The new workers' connections were untouched by all this.
            foreach ($new as $client) {
                $client->kill();
            }
            self::assertSame(200, HttpClient::get($kiln->baseUrl() . '/')['status']);
        } finally {
            $kiln->stop();
        }
    }

    public function testAFastStopClosesOpenConnectionsWith1001(): void
    {
        $kiln = KilnProcess::start(IndependentClientsTest::APP, ['--workers=1']);
        $client = ClientScript::python('hold', 'ws://' . $kiln->host() . ':' . $kiln->port() . '/ws/echo', ['0.05']);
        try {
            $client->next();
            self::assertSame(0, $kiln->stop());
            $end = $client->next(10.0);
            self::assertSame(1001, $end['close_code'], json_encode($end) ?: '');
        } finally {
            $kiln->stop();
        }
    }

    public function testAGracefulStopWaitsForWebSocketConnectionsUntilTheyAreClosed(): void
    {
        $kiln = KilnProcess::start(IndependentClientsTest::APP, ['--workers=1', '--drain-timeout=3']);
        try {
            $raw = new RawWebSocket($kiln, '/ws/echo');
            $kiln->signal(SIGQUIT);
            $kiln->waitForLog('~draining~', 5.0);
            $raw->send(RawWebSocket::frame(0x1, 'during the drain'));
            self::assertSame('during the drain', $raw->readFrame()['payload'] ?? null);
            self::assertTrue($kiln->isRunning(), 'the worker waits for its WebSocket connection');
            [$code, $reason] = $raw->readUntilClose(10.0);
            self::assertSame(1001, $code);
            self::assertSame('server shutting down', $reason);
            $raw->send(RawWebSocket::frame(0x8, pack('n', 1001)));
            self::assertSame(0, $kiln->waitForExit(10.0));
            self::assertStringNotContainsString('drain deadline', $kiln->log());
        } finally {
            $kiln->stop();
        }
    }
}
