<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\App;

use Kiln\Store\MemoryTable;
use Kiln\Tests\Support\HttpClient;
use Kiln\Tests\Support\KilnProcess;
use PHPUnit\Framework\TestCase;

final class RateLimitTest extends TestCase
{
    private const APP = __DIR__ . '/../../Fixtures/ratelimit/app.php';

    public function testTwoWorkersShareOneBucketThroughTheFileTableWhenApcuIsOff(): void
    {
        // --jit=off: no relaunch, so the workers run with PHP's default apc.enable_cli=0.
        $kiln = KilnProcess::start(self::APP, ['--workers=2', '--jit=off']);
        try {
            $this->assertTenAllowedAcrossWorkers($kiln, MemoryTable::class);
        } finally {
            $kiln->stop();
        }
    }

    public function testTwoWorkersShareOneBucketThroughApcuByDefault(): void
    {
        self::assertTrue(\extension_loaded('apcu'), 'make test installs php-apcu (scripts/install-deps.sh)');
        // kiln serve relaunches PHP with opcache, the JIT and apc.enable_cli=1 (JitLauncher).
        $kiln = KilnProcess::start(self::APP, ['--workers=2']);
        try {
            $this->assertTenAllowedAcrossWorkers($kiln, 'Kiln\Store\ApcuState');
        } finally {
            $kiln->stop();
        }
    }

    private function assertTenAllowedAcrossWorkers(KilnProcess $kiln, string $store): void
    {
        $statuses = [];
        $pids = [];
        // Fresh connections, until both workers have answered (at least 30 requests, at most 200).
        for ($i = 0; $i < 200 && ($i < 30 || \count($pids) < 2); $i++) {
            $response = HttpClient::get($kiln->baseUrl() . '/limited');
            self::assertMatchesRegularExpression('/^(allowed|limited) pid=(\d+) store=' . preg_quote($store, '/') . '$/', $response['body']);
            preg_match('/pid=(\d+)/', $response['body'], $m);
            $pids[$m[1]] = true;
            $statuses[] = $response['status'];
            if ($response['status'] === 429) {
                $retry = (int) ($response['headers']['retry-after'] ?? 0);
                self::assertGreaterThanOrEqual(1, $retry);
                self::assertLessThanOrEqual(6, $retry, 'one token takes 6 s at 10 per 60 s');
            } else {
                self::assertSame('10', $response['headers']['ratelimit-limit'] ?? null);
            }
        }
        self::assertCount(2, $pids, 'both workers answered: ' . $kiln->log());
        self::assertSame(array_fill(0, 10, 200), \array_slice($statuses, 0, 10), 'the first ten pass');
        self::assertSame([429], array_values(array_unique(\array_slice($statuses, 10))), 'the rest are limited, on either worker');
    }
}
