<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Scale;

use Kiln\Tests\Support\HttpClient;
use Kiln\Tests\Support\KilnProcess;
use Kiln\Tests\Support\RedisServer;
use Kiln\Tests\Support\SseClient;
use PHPUnit\Framework\TestCase;

/** With --redis and --admin-listen: /metrics says whether Redis answers, /ready turns 503 while it does not. */
final class RedisReadinessTest extends TestCase
{
    public function testReadyFollowsRedisAndTheReconnectIsCounted(): void
    {
        $redis = RedisServer::start();
        $kiln = KilnProcess::start(__DIR__ . '/../../../examples/realtime/app.php', ['--workers=2', '--redis=' . $redis->uri() . '?connect_timeout=0.5&timeout=1', '--admin-listen=127.0.0.1:0']);
        try {
            $line = $kiln->waitForLog('~admin listener on http://127\.0\.0\.1:\d+~');
            $admin = preg_match('~http://127\.0\.0\.1:\d+~', $line, $m) === 1 ? $m[0] : self::fail("no admin address in: $line");
            $publish = static fn(): int => SseClient::post($kiln->host(), $kiln->port(), '/publish/probe', 'x')[0];
            self::assertSame(200, $publish());
            // One series per worker, each 1 (a gauge summed over the workers would read 2).
            $series = static fn(): array => preg_match_all('~^kiln_redis_up\{pid="(\d+)"\} (\S+)$~m', HttpClient::get("$admin/metrics")['body'], $m) > 0
                ? array_combine($m[1], $m[2]) : [];
            self::until(static fn(): bool => \count($series()) === 2, 'kiln_redis_up for each of the 2 workers');
            self::assertEqualsCanonicalizing($kiln->workerPids(), array_map('intval', array_keys($series())));
            self::assertSame(['1', '1'], array_values($series()));
            self::assertDoesNotMatchRegularExpression('~^kiln_redis_up [0-9]~m', HttpClient::get("$admin/metrics")['body']);
            self::assertSame(200, HttpClient::get("$admin/ready")['status']);

            $redis->kill();
            // The worker learns it when it next uses Redis; its next report (within a second) tells the supervisor.
            self::until(static function () use ($publish, $admin): bool {
                $publish();
                return HttpClient::get("$admin/ready")['status'] === 503;
            }, '/ready answers 503 while Redis is down');
            self::assertStringContainsString('Redis is unreachable', HttpClient::get("$admin/ready")['body']);

            $redis->restart();
            // Traffic finds Redis again (the store reconnects on its next use; the bus checks every second).
            self::until(static function () use ($publish, $admin): bool {
                $publish();
                return HttpClient::get("$admin/ready")['status'] === 200;
            }, '/ready answers 200 again', 20.0);
            self::assertMatchesRegularExpression('/^kiln_redis_reconnects_total [1-9]/m', HttpClient::get("$admin/metrics")['body']);
        } finally {
            $kiln->stop();
            $redis->stop();
        }
    }

    private static function until(\Closure $check, string $what, float $timeout = 10.0): void
    {
        $deadline = microtime(true) + $timeout;
        while (!$check()) {
            self::assertLessThan($deadline, microtime(true), "timed out waiting for: $what");
            usleep(100_000);
        }
    }
}
