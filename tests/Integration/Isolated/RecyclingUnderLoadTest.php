<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Isolated;

/**
 * php-cgi would exit after PHP_FCGI_MAX_REQUESTS and drop the request it had accepted next; Kiln recycles
 * each child itself, between requests, so recycling costs no request. The one heavy test (~10–40 s).
 */
final class RecyclingUnderLoadTest extends IsolatedTestCase
{
    private const AB = '/usr/bin/ab';

    public function testTwentyThousandRequestsWithChildrenRecycledEvery500FailNone(): void
    {
        if (!is_executable(self::AB)) {
            self::fail('ab (apache2-utils) is not installed: scripts/install-deps.sh installs it');
        }
        $server = $this->serve(['KILN_TEST_POOL_SIZE' => '2', 'KILN_TEST_POOL_MAX_REQUESTS' => '500'], ['--workers=2']);
        $this->waitForChildren(4);
        $url = $server->baseUrl() . '/legacy/hello.php';
        $output = [];
        exec(self::AB . ' -n 20000 -c 32 -s 30 ' . escapeshellarg($url) . ' 2>&1', $output, $code);
        $report = implode("\n", $output);

        self::assertSame(0, $code, $report);
        self::assertMatchesRegularExpression('~^Complete requests:\s+20000$~m', $report);
        self::assertMatchesRegularExpression('~^Failed requests:\s+0$~m', $report);
        self::assertDoesNotMatchRegularExpression('~^Non-2xx responses:~m', $report);
        self::assertMatchesRegularExpression('~^Document Length:\s+18 bytes$~m', $report);
        // One child of a slice at a time: one that reaches 500 while the other is replaced serves a few more.
        $recycled = preg_match_all('~is replaced: served [5-9]\d\d+ requests \(--pool-max-requests=500\)~', $server->log());
        self::assertGreaterThanOrEqual(20, $recycled, "20000 requests over 4 children of 500 or a few more each: 30-40 recycles\n$report");
        self::assertLessThanOrEqual(40, $recycled, $report);
        self::assertStringNotContainsString('[error]', $server->log());
        self::waitUntil(fn(): bool => \count($this->phpCgiPids()) === 4, 5.0, 'four children, none left over');
    }
}
