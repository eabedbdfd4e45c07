<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Parity;

use PHPUnit\Framework\TestCase;

/** The comparison itself: accepted differences vanish, anything else is reported by path. No servers here. */
final class ParityHarnessTest extends TestCase
{
    public function testEveryAcceptedDifferenceIsNormalisedAway(): void
    {
        $now = microtime(true);
        $a = self::response(self::server(), 'aaaaaaaaaaaaaaaaaaaaaaaaaa', 8001, $now);
        $b = self::response([
            ...self::server(),
            'SERVER_PORT' => '9002', 'HTTP_HOST' => 'localhost:9002', 'REMOTE_PORT' => '61000', 'SERVER_SOFTWARE' => 'Kiln',
            'REQUEST_TIME' => (int) $now, 'REQUEST_TIME_FLOAT' => $now + 0.01, 'SCRIPT_FILENAME' => '/srv/other/dump.php',
            'DOCUMENT_ROOT' => '/srv/other', 'PATH' => '/usr/bin', 'USER' => 'root',
        ], 'bbbbbbbbbbbbbbbbbbbbbbbbbb', 9002, $now, ['server' => ['Kiln'], 'date' => ['another date'], 'content-length' => ['1']]);
        unset($b['body_server']['FCGI_ROLE'], $b['body_server']['HOME'], $b['body_server']['PATH_INFO']);
        self::assertSame([], self::compare($a, $b, '/srv/site', '/srv/other'));
    }

    public function testAValueOutsideTheAcceptedListIsReportedWithItsPathAndBothValues(): void
    {
        $a = self::response(self::server(), 'aaaaaaaaaaaaaaaaaaaaaaaaaa', 8001, microtime(true));
        $b = self::response([...self::server(), 'SCRIPT_NAME' => '/index.php'], 'aaaaaaaaaaaaaaaaaaaaaaaaaa', 8001, microtime(true));
        $differences = self::compare($a, $b);
        self::assertCount(1, $differences);
        self::assertStringContainsString('body.server.SCRIPT_NAME', $differences[0]);
        self::assertStringContainsString('"/dump.php"', $differences[0]);
        self::assertStringContainsString('"/index.php"', $differences[0]);
    }

    public function testAHeaderOnOneSideOnlyAndSameNameHeadersInAnotherOrderAreReported(): void
    {
        $a = self::response(self::server(), 'aaaaaaaaaaaaaaaaaaaaaaaaaa', 8001, microtime(true));
        $b = self::response(self::server(), 'aaaaaaaaaaaaaaaaaaaaaaaaaa', 8001, microtime(true), ['x-powered-by' => ['PHP/8.2'], 'x-multi' => ['b', 'a']]);
        $text = implode("\n", self::compare($a, $b));
        self::assertStringContainsString('headers.x-powered-by.0', $text);
        self::assertStringContainsString('headers.x-multi.0', $text);
    }

    public function testARequestTimeOutsideTheRequestWindowStillDiffers(): void
    {
        $now = microtime(true);
        $a = self::response(self::server(), 'aaaaaaaaaaaaaaaaaaaaaaaaaa', 8001, $now);
        $b = self::response([...self::server(), 'REQUEST_TIME' => (int) $now - 3600], 'aaaaaaaaaaaaaaaaaaaaaaaaaa', 8001, $now);
        self::assertStringContainsString('body.server.REQUEST_TIME', implode("\n", self::compare($a, $b)));
    }

    public function testAnotherSessionCountIsNotHiddenBySessionIdNormalisation(): void
    {
        $a = self::response(self::server(), 'aaaaaaaaaaaaaaaaaaaaaaaaaa', 8001, microtime(true));
        $b = self::response(self::server(), 'bbbbbbbbbbbbbbbbbbbbbbbbbb', 8001, microtime(true), visits: 2);
        self::assertStringContainsString('body.session.visits', implode("\n", self::compare($a, $b)));
    }

    public function testEveryNormalisationInTheCodeIsANamedAcceptedDifference(): void
    {
        $source = (string) file_get_contents(__DIR__ . '/AcceptedDifferences.php');
        preg_match_all('~// ([a-z-]+)$~m', $source, $m);
        self::assertCount(\count(AcceptedDifferences::LIST), array_unique($m[1]), 'every listed difference is applied somewhere');
        foreach ($m[1] as $name) {
            self::assertArrayHasKey($name, AcceptedDifferences::LIST, "normalisation '$name' is not in the documented list");
        }
    }

    /** @return array<string, mixed> */
    private static function server(): array
    {
        return ['SCRIPT_NAME' => '/dump.php', 'SCRIPT_FILENAME' => '/srv/site/dump.php', 'DOCUMENT_ROOT' => '/srv/site',
            'SERVER_PORT' => '8001', 'HTTP_HOST' => 'localhost:8001', 'REMOTE_PORT' => '50000', 'SERVER_SOFTWARE' => 'nginx/1.22.1',
            'REQUEST_TIME' => time(), 'REQUEST_TIME_FLOAT' => microtime(true), 'FCGI_ROLE' => 'RESPONDER', 'HOME' => '/var/www',
            'PATH_INFO' => '', 'HTTP_COOKIE' => 'x=1'];
    }

    /**
     * @param array<string, mixed> $server
     * @param array<string, list<string>> $extraHeaders
     * @return array{body_server: array<string, mixed>, session: string, port: int, at: float, headers: array<string, list<string>>, visits: int}
     */
    private static function response(array $server, string $session, int $port, float $at, array $extraHeaders = [], int $visits = 1): array
    {
        return ['body_server' => $server, 'session' => $session, 'port' => $port, 'at' => $at, 'visits' => $visits,
            'headers' => ['set-cookie' => ["PHPSESSID=$session; path=/"], 'x-multi' => ['a', 'b'], ...$extraHeaders]];
    }

    /**
     * @param array{body_server: array<string, mixed>, session: string, port: int, at: float, headers: array<string, list<string>>, visits: int} $a
     * @param array{body_server: array<string, mixed>, session: string, port: int, at: float, headers: array<string, list<string>>, visits: int} $b
     * @return list<string>
     */
    private static function compare(array $a, array $b, string $rootA = '/srv/site', string $rootB = '/srv/site'): array
    {
        return ParityDiff::differences(self::normalise($a, $rootA), self::normalise($b, $rootB));
    }

    /**
     * @param array{body_server: array<string, mixed>, session: string, port: int, at: float, headers: array<string, list<string>>, visits: int} $r
     * @return array{status: int, headers: array<string, list<string>>, body: mixed}
     */
    private static function normalise(array $r, string $root): array
    {
        $server = new ParityServer('x', '127.0.0.1', $r['port'], $root, static function (): void {}, static fn(): string => '');
        $body = (string) json_encode(['server' => $r['body_server'], 'session' => ['id' => $r['session'], 'visits' => $r['visits']],
            'headers_list' => ["Set-Cookie: PHPSESSID={$r['session']}; path=/"]]);
        return AcceptedDifferences::normalise(
            ['status' => 200, 'headers' => $r['headers'], 'body' => $body, 'sent_at' => $r['at'], 'received_at' => $r['at'] + 0.05],
            $server,
        );
    }
}
