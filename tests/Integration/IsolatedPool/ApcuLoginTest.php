<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\IsolatedPool;

use Kiln\Tests\Support\HttpClient;
use Kiln\Tests\Support\KilnProcess;
use PHPUnit\Framework\TestCase;

/** A login kept in APCu by the script holds on the isolated tier with the default pool (every worker, every child). */
final class ApcuLoginTest extends TestCase
{
    private ?KilnProcess $server = null;

    protected function tearDown(): void
    {
        $this->server?->stop();
        $this->server = null;
    }

    public function testALoginKeptInApcuHoldsAcrossTwentyRequestsWithTheDefaultPool(): void
    {
        $this->server = KilnProcess::start(__DIR__ . '/../../Fixtures/apcu-login', ['--tier=isolated']);
        $base = $this->server->baseUrl();

        $login = HttpClient::get($base . '/login.php', [], 10.0);
        self::assertSame(200, $login['status'], $login['body']);
        self::assertMatchesRegularExpression('/^token=([0-9a-f]{32})/', $login['headers']['set-cookie'] ?? '');
        $token = substr($login['headers']['set-cookie'], 6, 32);

        $pids = [];
        for ($i = 1; $i <= 20; $i++) {
            $response = HttpClient::get($base . '/whoami.php', ['Cookie' => 'token=' . $token], 10.0);
            self::assertSame(200, $response['status'], $response['body']);
            self::assertStringStartsWith('user=alice ', $response['body'], "request $i: " . $response['body']);
            $pids[] = $response['body'];
        }
        self::assertGreaterThan(1, count(array_unique($pids)), 'the requests reached more than one child');
    }
}
