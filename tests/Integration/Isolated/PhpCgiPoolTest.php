<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Isolated;

use Kiln\Tests\Support\RawClient;

/** What a script run in the pool sees, and what the client gets back. */
final class PhpCgiPoolTest extends IsolatedTestCase
{
    public function testAHundredRequestsEachStartFromAFreshPhpStateInWarmReusedChildren(): void
    {
        $this->serve();
        $pids = [];
        for ($i = 0; $i < 100; $i++) {
            $response = $this->get('/legacy/state.php');
            self::assertSame(200, $response['status'], "request $i: {$response['body']}");
            $state = json_decode($response['body'], true, 4, JSON_THROW_ON_ERROR);
            self::assertIsArray($state);
            self::assertSame(
                ['fresh' => true, 'static' => 1, 'classStatic' => 1, 'global' => 1, 'precisionBefore' => '14', 'opcache' => true],
                array_diff_key($state, ['pid' => 0]),
                "request $i",
            );
            $pids[] = $state['pid'];
        }
        self::assertGreaterThan(1, max(array_count_values($pids)), 'children are reused, not started per request');
        self::assertLessThanOrEqual(2, \count(array_unique($pids)), 'no child was replaced');
        self::assertStringNotContainsString('Cannot redeclare', $this->server()->log());
    }

    public function testAChildServesPastPhpCgisOwnLimitOf500RequestsBecauseKilnRecyclesInstead(): void
    {
        $this->serve(['KILN_TEST_POOL_SIZE' => '1']);
        $first = $this->get('/legacy/pid.php')['body'];
        for ($i = 2; $i <= 520; $i++) {
            $response = $this->get('/legacy/pid.php');
            self::assertSame([200, $first], [$response['status'], $response['body']], "request $i");
        }
    }

    public function testStatusHeadersCookiesAndTheScriptsLoggedErrorsComeThrough(): void
    {
        $server = $this->serve();
        $client = RawClient::to($server);
        $client->send("GET /legacy/headers.php?x=1 HTTP/1.1\r\nHost: test\r\nX-Request-Id: ignored\r\n\r\n");
        $response = $client->readResponse(10.0);
        self::assertNotNull($response);
        self::assertSame(201, $response['status']);
        self::assertSame(['headers'], $response['headers']['x-script'] ?? null);
        self::assertSame(['a=1', 'b=2'], $response['headers']['set-cookie'] ?? null);
        self::assertSame('made GET /legacy/headers.php x=1', $response['body']);
        $server->waitForLog('~\[warning\] \[worker 1 \d+\] php-cgi \[[0-9a-f]+\] /legacy/headers\.php: a line for the error log~', 5.0);
        // Each line at the level PHP's prefix gives it.
        $server->waitForLog('~\[info\] \[worker 1 \d+\] php-cgi \[[0-9a-f]+\] /legacy/headers\.php: PHP Deprecated:  a deprecation for the error log in ~', 5.0);
        $client->close();
    }

    /** PHP's message of an uncaught exception and its trace are one entry of the error log, at error level. */
    public function testAnUncaughtExceptionIsOneEntryWithItsTrace(): void
    {
        $this->serve();
        self::assertSame(500, $this->get('/legacy/uncaught.php')['status']);
        $entry = $this->server()->waitForLog('~/legacy/uncaught\.php: PHP Fatal error:  Uncaught RuntimeException: kiln isolated trace~', 5.0);
        self::assertMatchesRegularExpression('~\[error\] \[worker 1 \d+\] php-cgi \[[0-9a-f]+\] /legacy/uncaught\.php: PHP Fatal error:  '
            . 'Uncaught RuntimeException: kiln isolated trace in \S+/uncaught\.php:7 \| Stack trace: \| #0 \S+/uncaught\.php\(9\): '
            . 'kiln_isolated_trace\(\) \| #1 \{main\} \|   thrown in \S+/uncaught\.php on line 7$~', $entry);
    }

    public function testOutputReachesTheClientAsTheScriptFlushesItNotWhenTheScriptEnds(): void
    {
        $server = $this->serve();
        $client = RawClient::to($server);
        $started = microtime(true);
        $client->send("GET /legacy/stream.php?s=1 HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n");
        $socket = $client->socket();
        $read = [$socket];
        $write = $except = null;
        self::assertSame(1, stream_select($read, $write, $except, 5));
        $firstByte = microtime(true) - $started;
        $raw = $client->readUntilClosed(10.0);
        $total = microtime(true) - $started;
        self::assertLessThan(0.5, $firstByte, 'the first line comes as soon as the script flushes it');
        self::assertGreaterThanOrEqual(0.9, $total);
        self::assertStringContainsString("done\n", $raw);
        $client->close();
    }

    public function testAnAnswerCompleteWhenItsHeadArrivesGoesOutWholeWithAContentLength(): void
    {
        $server = $this->serve();
        $client = RawClient::to($server);
        $client->send("GET /legacy/hello.php HTTP/1.1\r\nHost: test\r\n\r\n");
        $response = $client->readResponse(10.0);
        self::assertNotNull($response);
        self::assertSame([200, 'Hello from php-cgi'], [$response['status'], $response['body']]);
        self::assertSame(['18'], $response['headers']['content-length'] ?? null);
        self::assertArrayNotHasKey('transfer-encoding', $response['headers']);
        $client->send("GET /legacy/stream.php?s=0.2 HTTP/1.1\r\nHost: test\r\n\r\n");
        $streamed = $client->readResponse(10.0);
        self::assertNotNull($streamed);
        self::assertSame(['chunked'], $streamed['headers']['transfer-encoding'] ?? null, 'a script that flushes early still streams');
        self::assertStringEndsWith("done\n", $streamed['body']);
        $client->close();
    }

    public function testARequestBodyIsTheScriptsInputWhetherSmallOrSpooledToDisk(): void
    {
        $server = $this->serve();
        foreach (['a=1&b=two' => 'application/x-www-form-urlencoded', str_repeat("0123456789abcdef", 256 * 1024) => 'application/octet-stream'] as $body => $type) {
            $client = RawClient::to($server);
            $client->send("POST /legacy/post.php HTTP/1.1\r\nHost: test\r\nContent-Type: $type\r\nContent-Length: " . \strlen($body) . "\r\nConnection: close\r\n\r\n" . $body);
            $response = $client->readResponse(20.0);
            self::assertNotNull($response);
            self::assertSame(200, $response['status'], $response['body']);
            $got = json_decode($response['body'], true, 4, JSON_THROW_ON_ERROR);
            self::assertIsArray($got);
            self::assertSame([\strlen($body), md5($body)], [$got['input'], $got['md5']]);
            if ($type !== 'application/octet-stream') {
                self::assertSame(['a' => '1', 'b' => 'two'], $got['post']);
            }
            $client->close();
        }
    }

    public function testChildrenGetOnlyAllowlistedEnvironmentTheIniOverridesAndNeverHttpProxy(): void
    {
        $server = $this->serve(['KILN_TEST_PASSED' => 'yes', 'KILN_TEST_SECRET' => 'no']);
        $client = RawClient::to($server);
        $client->send("GET /legacy/env.php HTTP/1.1\r\nHost: example.test:8080\r\nProxy: http://evil.test/\r\n\r\n");
        $response = $client->readResponse(10.0);
        self::assertNotNull($response);
        self::assertSame(
            ['passed' => 'yes', 'secret' => false, 'path' => false, 'memory_limit' => '77M', 'proxy' => null, 'host' => 'example.test:8080', 'jit' => true],
            json_decode($response['body'], true, 4, JSON_THROW_ON_ERROR),
        );
        $client->close();
    }

    public function testAHeadRequestGetsTheHeadersAndLeavesTheChildFree(): void
    {
        $server = $this->serve(['KILN_TEST_POOL_SIZE' => '1']);
        $pid = $this->get('/legacy/pid.php')['body'];
        $client = RawClient::to($server);
        $client->send("HEAD /legacy/state.php HTTP/1.1\r\nHost: test\r\n\r\n");
        $response = $client->readResponse(10.0, true);
        self::assertNotNull($response);
        self::assertSame(200, $response['status']);
        self::assertSame(['application/json'], $response['headers']['content-type'] ?? null);
        self::assertSame('', $response['body']);
        $client->send("GET /legacy/pid.php HTTP/1.1\r\nHost: test\r\n\r\n");
        $again = $client->readResponse(10.0);
        self::assertSame([200, $pid], [$again['status'] ?? 0, $again['body'] ?? ''], 'the same child, at once');
        $client->close();
    }

    public function testARunnerBuiltFromTheSiteConfigurationServesWithItsSettings(): void
    {
        $this->serve(['KILN_TEST_FROM_CONFIG' => '1', 'KILN_TEST_POOL_SIZE' => '1']);
        $this->waitForChildren(2); // the fixture's own pool, and the one from the configuration
        $env = json_decode($this->get('/legacy/env.php')['body'], true, 4, JSON_THROW_ON_ERROR);
        self::assertIsArray($env);
        self::assertSame('33M', $env['memory_limit']);
        self::assertFalse($env['jit'], 'the children run opcache without the JIT unless asked (--pool-jit defaults to off, as php-fpm)');
    }

    public function testTheParentListensOnOneSocketInADirectoryOnlyTheServerMayEnterAndItsChildrenShareIt(): void
    {
        $server = $this->serve(['KILN_TEST_POOL_SIZE' => '3'], ['--workers=2']);
        $children = $this->waitForChildren(3);
        $parents = $this->phpCgiParents();
        self::assertCount(1, $parents, 'one parent for both workers');
        $args = self::commandLine($parents[0]);
        $at = array_search('-b', $args, true);
        self::assertIsInt($at, implode(' ', $args));
        $socket = $args[$at + 1];
        self::assertSame('socket', filetype($socket));
        self::assertContains('opcache.enable=1', $args);
        self::assertSame(0700, fileperms(\dirname($socket)) & 0777);
        self::assertSame(rtrim(sys_get_temp_dir(), '/') . '/kiln-' . $server->pid(), substr(\dirname($socket), 0, -9));
        self::assertSame("3\n", self::environmentOf($parents[0])['PHP_FCGI_CHILDREN'] ?? null);
        foreach ($children as $child) {
            self::assertSame($parents[0], posix_getpgid($child), 'in the parent\'s process group');
        }
        self::assertSame($parents[0], posix_getpgid($parents[0]), 'which the parent leads');
        self::assertSame(0, $server->stop());
        clearstatcache();
        self::assertDirectoryDoesNotExist(\dirname($socket), 'the socket directory goes with the server');
    }

    public function testTheChildrenKeepTheServersOwnPolicyByDefault(): void
    {
        $this->serve(['KILN_TEST_POOL_SIZE' => '2']);
        $own = self::policyOf(getmypid());
        self::assertSame([$own, $own, $own], array_map(self::policyOf(...), [...$this->phpCgiParents(), ...$this->waitForChildren(2)]), 'parent and children');
        self::assertSame(200, $this->get('/legacy/pid.php')['status']);
        self::assertStringNotContainsString('scheduling policy', $this->server()->log(), 'chrt is not even tried');
    }

    public function testAskedToTheChildrenRunAsBatchJobsAndTheWorkersDoNot(): void
    {
        // Where this machine cannot (no chrt, or a seccomp policy against it), the pool runs as without it.
        exec('chrt -b 0 true 2>/dev/null', $output, $code);
        $possible = $code === 0;
        $this->serve(['KILN_TEST_POOL_SIZE' => '2', 'KILN_TEST_POOL_SCHED' => 'batch']);
        $children = $this->waitForChildren(2);
        self::assertSame(200, $this->get('/legacy/pid.php')['status']);
        $own = self::policyOf(getmypid());
        $expected = $possible ? 'batch' : $own;
        self::assertSame([$expected, $expected, $expected], array_map(self::policyOf(...), [...$this->phpCgiParents(), ...$children]), 'parent and children');
        self::assertSame([$own], array_map(self::policyOf(...), $this->workers()), 'the workers keep the server\'s own');
        self::assertSame(!$possible, str_contains($this->server()->log(), 'run under the server\'s own scheduling policy'));
    }

    public function testWhereThePolicyCannotBeSetThePoolRunsUnderTheServersOwnAndTheLogSaysWhy(): void
    {
        $bin = (string) realpath(__DIR__ . '/../../Fixtures/no-batch'); // its chrt fails as a seccomp policy makes it
        $this->serve(['KILN_TEST_POOL_SIZE' => '2', 'KILN_TEST_POOL_SCHED' => 'batch', 'PATH' => "$bin:" . getenv('PATH')]);
        $own = self::policyOf(getmypid());
        self::assertSame([$own, $own], array_map(self::policyOf(...), $this->waitForChildren(2)));
        self::assertSame(200, $this->get('/legacy/pid.php')['status']);
        self::assertStringContainsString("run under the server's own scheduling policy: `$bin/chrt -b 0` failed: chrt: failed to set pid 0's policy", $this->server()->log());
    }

    /** The process's scheduling policy, from field 41 of /proc/PID/stat. */
    private static function policyOf(int $pid): string
    {
        $stat = (string) @file_get_contents("/proc/$pid/stat");
        $fields = explode(' ', substr($stat, (int) strrpos($stat, ')') + 2));
        return match ($fields[41 - 3] ?? '') {
            '0' => 'normal',
            '3' => 'batch',
            default => 'policy ' . ($fields[41 - 3] ?? '?'),
        };
    }

    /** @return array<string, string> */
    private static function environmentOf(int $pid): array
    {
        $environment = [];
        foreach (explode("\0", (string) @file_get_contents("/proc/$pid/environ")) as $pair) {
            [$name, $value] = explode('=', $pair, 2) + [1 => ''];
            $environment[$name] = $value . "\n";
        }
        return $environment;
    }
}
