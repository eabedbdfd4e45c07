<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Isolated;

use Kiln\Tests\Support\HttpClient;
use Kiln\Tests\Support\KilnProcess;
use PHPUnit\Framework\TestCase;

/**
 * Real servers with a real php-cgi pool (tests/Fixtures/isolated/app.php: public/ under /legacy/, routes
 * beside it), configured per test through KILN_TEST_POOL_* variables.
 */
abstract class IsolatedTestCase extends TestCase
{
    protected const APP = __DIR__ . '/../../Fixtures/isolated/app.php';

    private ?KilnProcess $server = null;

    protected function tearDown(): void
    {
        $this->server?->stop();
        $this->server = null;
    }

    /**
     * @param array<string, string> $env KILN_TEST_POOL_SIZE, _MAX_REQUESTS, _QUEUE, _SCHED, KILN_TEST_TIME_LIMIT, KILN_TEST_PHP_CGI
     * @param list<string> $args
     */
    protected function serve(array $env = [], array $args = []): KilnProcess
    {
        return $this->server = KilnProcess::start(self::APP, ['--workers=1', '--log-level=debug', ...$args], $env);
    }

    protected function server(): KilnProcess
    {
        self::assertNotNull($this->server);
        return $this->server;
    }

    /** @return array{status: int, headers: array<string, string>, body: string} */
    protected function get(string $path, float $timeout = 10.0): array
    {
        return HttpClient::get($this->server()->baseUrl() . $path, [], $timeout);
    }

    /** @return list<int> php-cgi parents the supervisor runs now (one per pool) */
    protected function phpCgiParents(): array
    {
        return array_values(array_filter($this->server()->workerPids(), static fn(int $pid): bool => self::isPhpCgi($pid)));
    }

    /** @return list<int> the children of the php-cgi parents (the processes that run the scripts) */
    protected function phpCgiPids(): array
    {
        $children = [];
        foreach ($this->phpCgiParents() as $parent) {
            array_push($children, ...self::childrenOf($parent));
        }
        return $children;
    }

    /** @return list<int> */
    protected static function childrenOf(int $pid): array
    {
        $children = [];
        foreach (glob("/proc/$pid/task/*/children") ?: [] as $file) {
            foreach (preg_split('/\s+/', trim((string) @file_get_contents($file))) ?: [] as $child) {
                if (ctype_digit($child)) {
                    $children[] = (int) $child;
                }
            }
        }
        return $children;
    }

    /** @return list<int> worker processes (the supervisor's children that are not php-cgi) */
    protected function workers(): array
    {
        return array_values(array_filter($this->server()->workerPids(), static fn(int $pid): bool => !self::isPhpCgi($pid)));
    }

    /** @return list<int> php-cgi children (of every parent), once there are $count of them and their parents listen */
    protected function waitForChildren(int $count, float $timeout = 10.0): array
    {
        self::waitUntil(fn(): bool => \count($this->phpCgiPids()) === $count
            && substr_count($this->server()->log(), ' is up on ') >= \count($this->phpCgiParents()), $timeout, "$count php-cgi children up");
        return $this->phpCgiPids();
    }

    /** @param \Closure(): bool $condition */
    protected static function waitUntil(\Closure $condition, float $timeout, string $what): void
    {
        $deadline = microtime(true) + $timeout;
        while (!$condition()) {
            if (microtime(true) > $deadline) {
                self::fail("timed out after {$timeout} s waiting for: $what");
            }
            usleep(20_000);
        }
    }

    protected static function isAlive(int $pid): bool
    {
        $stat = @file_get_contents("/proc/$pid/stat");
        if ($stat === false || ($close = strrpos($stat, ')')) === false) {
            return false;
        }
        return ($stat[$close + 2] ?? 'Z') !== 'Z';
    }

    /** @return list<string> the process's arguments */
    protected static function commandLine(int $pid): array
    {
        $cmdline = @file_get_contents("/proc/$pid/cmdline");
        return $cmdline === false || $cmdline === '' ? [] : explode("\0", rtrim($cmdline, "\0"));
    }

    private static function isPhpCgi(int $pid): bool
    {
        return str_starts_with(basename(self::commandLine($pid)[0] ?? ''), 'php-cgi');
    }
}
