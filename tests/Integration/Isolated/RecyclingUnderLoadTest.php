<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Isolated;

/**
 * php-cgi's children exit after PHP_FCGI_MAX_REQUESTS and the parent forks fresh ones; with a connection
 * per request no request is lost to that. The one heavy test (~10–40 s).
 */
final class RecyclingUnderLoadTest extends IsolatedTestCase
{
    private const AB = '/usr/bin/ab';

    public function testTwentyThousandRequestsWithChildrenRecycledEvery500FailNone(): void
    {
        if (!is_executable(self::AB)) {
            self::fail('ab (apache2-utils) is not installed: scripts/install-deps.sh installs it');
        }
        $server = $this->serve(['KILN_TEST_POOL_SIZE' => '4', 'KILN_TEST_POOL_MAX_REQUESTS' => '500'], ['--workers=2']);
        $first = $this->waitForChildren(4);
        $url = $server->baseUrl() . '/legacy/hello.php';
        $output = [];
        exec(self::AB . ' -n 20000 -c 32 -s 30 ' . escapeshellarg($url) . ' 2>&1', $output, $code);
        $report = implode("\n", $output);

        self::assertSame(0, $code, $report);
        self::assertMatchesRegularExpression('~^Complete requests:\s+20000$~m', $report);
        self::assertMatchesRegularExpression('~^Failed requests:\s+0$~m', $report);
        self::assertDoesNotMatchRegularExpression('~^Non-2xx responses:~m', $report);
        self::assertMatchesRegularExpression('~^Document Length:\s+18 bytes$~m', $report);
        self::assertStringNotContainsString('[error]', $server->log());
        self::waitUntil(fn(): bool => \count($this->phpCgiPids()) === 4, 5.0, 'four children, none left over');
        self::assertSame([], array_intersect($first, $this->phpCgiPids()), 'every child was recycled');
        self::assertSame([], array_filter($first, self::isAlive(...)));
    }
}
