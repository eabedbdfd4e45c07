<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Scale;

use Kiln\Tests\Support\HttpClient;
use Kiln\Tests\Support\KilnProcess;
use Kiln\Tests\Support\RedisServer;
use PHPUnit\Framework\TestCase;

/**
 * With --redis, App routes keep sessions where php-redis's session handler does (PHPREDIS_SESSION:<id>, PHP's
 * session format), so a script of the isolated tier given session.save_handler=redis, or a php-fpm node set up the
 * same way, shares them: one cookie, one $_SESSION, during a migration.
 */
final class RedisSessionsTest extends TestCase
{
    public function testARouteAndAnIsolatedTierScriptOnPhpRedisShareOneSession(): void
    {
        // A precondition, not a skip: `make test` installs it (scripts/install-deps.sh).
        self::assertStringContainsString("\nredis\n", (string) shell_exec('php-cgi -m 2>/dev/null'), 'php-cgi has no php-redis: install php-redis (scripts/install-deps.sh does)');
        $redis = RedisServer::start();
        $kiln = KilnProcess::start(__DIR__ . '/../../Fixtures/redis-sessions/app.php', [
            '--workers=2',
            '--redis=' . $redis->uri(),
            '--php-ini=session.save_handler=redis',
            '--php-ini=session.save_path=tcp://127.0.0.1:' . $redis->port,
        ]);
        try {
            $first = HttpClient::get($kiln->baseUrl() . '/route/visits');
            self::assertSame(200, $first['status'], $first['body']);
            self::assertSame(1, preg_match('/^PHPSESSID=([0-9a-f]{32});/', $first['headers']['set-cookie'] ?? '', $m), (string) ($first['headers']['set-cookie'] ?? ''));
            $id = $m[1];
            $cookie = ['Cookie' => "PHPSESSID=$id"];

            $classic = HttpClient::get($kiln->baseUrl() . '/classic.php', $cookie);
            self::assertSame(200, $classic['status'], $classic['body']);
            self::assertSame(['visits' => 2, 'id' => $id], json_decode($classic['body'], true), 'php-cgi read the route\'s session from Redis');

            $again = json_decode(HttpClient::get($kiln->baseUrl() . '/route/visits', $cookie)['body'], true);
            self::assertSame(['visits' => 3, 'classic' => 'set by redis in cgi-fcgi', 'id' => $id], $again, 'the route read what php-redis wrote');
            self::assertStringContainsString('visits|i:3;', $redis->cli('GET', "PHPREDIS_SESSION:$id"), 'stored as php-redis stores it');
        } finally {
            $kiln->stop();
            $redis->stop();
        }
    }
}
