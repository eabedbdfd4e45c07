<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Server;

use Kiln\Tests\Support\KilnProcess;
use Kiln\Tests\Support\RawClient;
use PHPUnit\Framework\TestCase;

/**
 * A worker that crashes in the middle of a request (a segfault on one URL, as a JIT fault gives) came up fine:
 * it is replaced at once, as Apache replaces a child, and not held back as a worker that cannot start. Before,
 * a crash on a worker's first request (every request, for an app that ends each one with exit()) counted as a
 * failed start: each slot waited longer and longer, up to 10 s, and the whole site with it.
 */
final class RequestCrashTest extends TestCase
{
    private const ROOT = __DIR__ . '/../../Fixtures/worker-crash';

    public function testAWorkerThatCrashesInItsFirstRequestIsReplacedAtOnce(): void
    {
        $kiln = KilnProcess::start(self::ROOT, ['--workers=1', '--tier=sequential']);
        for ($i = 1; $i <= 4; $i++) {
            $client = RawClient::to($kiln);
            $client->send("GET /crash.php HTTP/1.1\r\nHost: localhost\r\n\r\n");
            self::assertNull($client->readResponse(10.0), 'the crash leaves no answer');
            $client->close();
            self::waitForCrashes($kiln, $i);
        }
        $client = RawClient::to($kiln);
        $client->send("GET /pid.php HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
        self::assertSame(200, $client->readResponse(10.0)['status'] ?? null);
        $client->close();
        $log = $kiln->log();
        self::assertSame(4, preg_match_all('~killed by signal 11 \(SIGSEGV\); replacing it now~', $log), $log);
        self::assertStringNotContainsString('before serving a request', $log);
        self::assertStringNotContainsString('restarting it in', $log);
        self::assertLessThanOrEqual(1, substr_count($log, '--jit=off'), 'what a crash under the JIT may mean is said once');
        self::assertSame(0, $kiln->stop());
    }

    private static function waitForCrashes(KilnProcess $kiln, int $count): void
    {
        $deadline = microtime(true) + 10.0;
        while (substr_count($kiln->log(), 'killed by signal 11 (SIGSEGV)') < $count) {
            self::assertLessThan($deadline, microtime(true), "crash $count was not logged:\n" . $kiln->log());
            usleep(20_000);
        }
    }
}
