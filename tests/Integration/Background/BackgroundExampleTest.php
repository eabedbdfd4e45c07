<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Background;

use Kiln\Tests\Support\HttpClient;
use Kiln\Tests\Support\KilnProcess;
use PHPUnit\Framework\TestCase;

/** examples/background does what its comments say. */
final class BackgroundExampleTest extends TestCase
{
    public function testTheExampleCountsPrimesInATaskWorkerAndItsHooksTimersAndProcessRun(): void
    {
        $server = KilnProcess::start(\dirname(__DIR__, 3) . '/examples/background', ['--workers=1', '--task-workers=1'], [], 20.0);
        try {
            $primes = json_decode(HttpClient::get($server->baseUrl() . '/primes?below=100000', [], 20.0)['body'], true);
            self::assertIsArray($primes);
            self::assertSame(9592, $primes['primes']);

            $server->waitForLog('/worker 1 \(pid \d+\) is serving/', 10.0);
            $server->waitForLog('/heartbeat from pid \d+/', 10.0);
            $deadline = microtime(true) + 15.0;
            do {
                $stats = json_decode(HttpClient::get($server->baseUrl() . '/stats')['body'], true);
                self::assertIsArray($stats);
                usleep(100_000);
            } while ($stats['ticks'] < 2 && microtime(true) < $deadline);
            self::assertSame(1, $stats['worker'], 'the start hook ran');
            self::assertGreaterThanOrEqual(2, $stats['ticks'], 'the per-worker timer ticks');

            self::assertSame(0, $server->stop());
            self::assertMatchesRegularExpression('/worker 1 \(pid \d+\) is done/', $server->log(), 'the stop hook ran');
        } finally {
            $server->stop();
        }
    }
}
