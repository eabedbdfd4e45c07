<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\State;

use Kiln\Tests\Support\KilnProcess;
use PHPUnit\Framework\TestCase;

/**
 * The shared-state routes of examples/realtime/app.php (docs/state.md) on a node of two workers, once per
 * node-local backend: the subclass says how PHP is started (APCu on or off).
 */
abstract class ExampleStateTestCase extends TestCase
{
    private const APP = __DIR__ . '/../../../examples/realtime/app.php';

    private const KILN = __DIR__ . '/../../../bin/kiln';

    private static ?KilnProcess $kiln = null;

    /** @return list<string> options for PHP before bin/kiln */
    abstract protected static function phpOptions(): array;

    public static function setUpBeforeClass(): void
    {
        self::$kiln = KilnProcess::launch([PHP_BINARY, ...static::phpOptions(), self::KILN, 'serve', self::APP, '--listen=127.0.0.1:0', '--workers=2']);
    }

    public static function tearDownAfterClass(): void
    {
        self::$kiln?->stop();
        self::$kiln = null;
    }

    public function testConcurrentIncrementsOnBothWorkersGiveEveryValueExactlyOnce(): void
    {
        $name = 'hits-' . bin2hex(random_bytes(4));
        $values = [];
        for ($round = 0; $round < 5; $round++) {
            $responses = $this->parallel(array_fill(0, 40, ['POST', "/counter/$name", '', []]));
            foreach ($responses as $response) {
                self::assertSame(200, $response['status'], $response['body']);
                $values[] = json_decode($response['body'], true, flags: \JSON_THROW_ON_ERROR)['value'];
            }
        }
        sort($values);
        self::assertSame(range(1, 200), $values);
        self::assertCount(2, $this->workers(), 'the node ran two workers, which share the listener');
    }

    public function testASessionCountsVisitsAcrossWorkersAndNamesTheNode(): void
    {
        $first = $this->request('GET', '/session/visits');
        self::assertSame(1, preg_match('/^PHPSESSID=([0-9a-f]{32}); Path=\/; HttpOnly; SameSite=Lax$/', $first['headers']['set-cookie'] ?? '', $m));
        $cookie = ['Cookie' => "PHPSESSID=$m[1]"];
        $answers = [json_decode($first['body'], true, flags: \JSON_THROW_ON_ERROR)];
        for ($i = 0; $i < 5; $i++) { // new connections: the two workers take turns in practice
            $answers[] = json_decode($this->request('GET', '/session/visits', '', $cookie)['body'], true, flags: \JSON_THROW_ON_ERROR);
        }
        self::assertSame([1, 2, 3, 4, 5, 6], array_column($answers, 'visits'));
        self::assertCount(1, array_unique(array_column($answers, 'node')));
        self::assertMatchesRegularExpression('/^[A-Za-z0-9._-]+$/', $answers[0]['node']);
    }

    public function testACachedBodyIsReadBackByEveryWorkerAndAMissIs404(): void
    {
        $key = 'k-' . bin2hex(random_bytes(4));
        self::assertSame(404, $this->request('GET', "/cache/$key")['status']);
        self::assertSame(204, $this->request('PUT', "/cache/$key", "héllo\nwörld")['status']);
        foreach ($this->parallel(array_fill(0, 6, ['GET', "/cache/$key", '', []])) as $response) {
            self::assertSame(200, $response['status']);
            self::assertSame("héllo\nwörld", $response['body']);
        }
        self::assertSame(204, $this->request('PUT', "/cache/$key", 'replaced')['status']);
        self::assertSame('replaced', $this->request('GET', "/cache/$key")['body']);
    }

    /** @return list<int> */
    private function workers(): array
    {
        \assert(self::$kiln !== null);
        return self::$kiln->workerPids();
    }

    /**
     * @param array<string, string> $headers
     * @return array{status: int, headers: array<string, string>, body: string}
     */
    private function request(string $method, string $path, string $body = '', array $headers = []): array
    {
        \assert(self::$kiln !== null);
        return Http::one(self::$kiln->host(), self::$kiln->port(), $method, $path, $body, $headers);
    }

    /**
     * @param list<array{string, string, string, array<string, string>}> $requests
     * @return list<array{status: int, headers: array<string, string>, body: string}>
     */
    private function parallel(array $requests): array
    {
        \assert(self::$kiln !== null);
        return Http::parallel(self::$kiln->host(), self::$kiln->port(), $requests);
    }
}
