<?php

declare(strict_types=1);

namespace Kiln\Tests\Apps;

use Kiln\Tests\Apps\Support\Browser;
use Kiln\Tests\Apps\Support\Matrix;
use Kiln\Tests\Apps\Support\Run;
use Kiln\Tests\Apps\Support\SiteCopy;
use Kiln\Tests\Apps\Support\Stack;
use Kiln\Tests\Support\ApacheProcess;
use Kiln\Tests\Support\MariaDbServer;
use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;

/**
 * One real application walked through the same user flow on Apache mod_php (the reference, once per class) and on
 * each Kiln stack, each with its own copy of the app and its own database. A stack the app is known not to run on
 * is listed in knownFailures() with the reason: its test passes only while that stays true, so the list (and
 * docs/apps.md, generated from the same runs) cannot go stale silently.
 */
abstract class AppTestCase extends TestCase
{
    private static ?MariaDbServer $db = null;

    /** @var array<string, Run> app → the Apache run */
    private static array $reference = [];

    /** @var array<string, list<string>> app → the --dev reports of its sequential-tier run ("/index.php [function] leaves function f()") */
    private static array $devReports = [];

    /** @var array<string, string> "app stack" → the server log of that run */
    private static array $logs = [];

    abstract protected static function app(): string;

    abstract protected static function isAppInstalled(): bool;

    abstract protected function prepare(MariaDbServer $db, string $stack): SiteCopy;

    abstract protected function walk(Run $run, Browser $user, Browser $visitor, MariaDbServer $db, string $stack): void;

    /** @return array<string, string> php.ini settings the app's copy is served with (as php_admin_value, --php-ini, ...) */
    protected function phpIni(SiteCopy $copy): array
    {
        return [];
    }

    /** @return array<string, string> environment variables the app's PHP gets (not on Apache) */
    protected function environment(SiteCopy $copy): array
    {
        return [];
    }

    /** @return array<string, string> stack → why the flow fails there (checked: the test fails when it passes) */
    protected static function knownFailures(): array
    {
        return [];
    }

    /**
     * The sequential tier runs with --dev: what it reports for the app (script, kind, first name), sorted. A report
     * not listed here fails the test, and so does a listed one that no longer appears.
     *
     * @return list<string>
     */
    protected static function expectedDevReports(): array
    {
        return [];
    }

    /** @return iterable<string, array{string}> */
    public static function kilnStacks(): iterable
    {
        foreach (Stack::ALL as $stack) {
            if ($stack !== Stack::APACHE) {
                yield $stack => [$stack];
            }
        }
    }

    public function testFlowPassesOnApacheModPhp(): void
    {
        $run = $this->reference();
        self::assertTrue($run->passed(), $this->explain($run));
    }

    #[DataProvider('kilnStacks')]
    public function testFlowOnKilnPassesAndMatchesApache(string $stack): void
    {
        $reference = $this->reference();
        $run = $this->runOn($stack);
        if ($stack === Stack::SEQUENTIAL) {
            $reports = self::$devReports[static::app()] ?? [];
            sort($reports);
            self::assertSame(static::expectedDevReports(), $reports, 'what --dev reported on the sequential tier');
        }
        $known = static::knownFailures()[$stack] ?? null;
        if ($known !== null) {
            // The flow is known to fail on this stack, not the stack to fail to serve it: a stack that never came up
            // (or a walk that broke before its first step) is no sign that the known failure still holds.
            self::assertNotSame([], $run->steps(), static::app() . " on $stack took no step: " . $run->reason());
            $differences = $run->differencesFrom($reference);
            self::assertFalse($run->passed() && $reference->passed() && $differences === [], static::app()
                . " now runs on $stack as on Apache: remove it from knownFailures() (\"$known\")");
            return;
        }
        self::assertTrue($reference->passed(), 'the reference run on Apache failed, nothing to compare with: ' . $reference->reason());
        self::assertTrue($run->passed(), $this->explain($run));
        self::assertSame([], $run->differencesFrom($reference), $this->explain($run) . "\n\n" . $reference->transcript());
    }

    private function reference(): Run
    {
        return self::$reference[static::app()] ??= $this->runOn(Stack::APACHE);
    }

    private function runOn(string $stack): Run
    {
        if (!static::isAppInstalled() || !MariaDbServer::isInstalled() || !ApacheProcess::isInstalled()) {
            self::fail(static::app() . ', MariaDB or Apache mod_php is not installed: run scripts/install-apps.sh (make test-apps does)');
        }
        self::$db ??= MariaDbServer::start();
        $copy = $this->prepare(self::$db, $stack);
        $run = new Run(static::app(), $stack);
        $started = microtime(true);
        $server = null;
        try {
            $server = Stack::start($stack, $copy->root(), $this->phpIni($copy), $this->environment($copy));
            $run->watchServerLog($server->log(...));
            $this->walk($run, new Browser($server->baseUrl()), new Browser($server->baseUrl()), self::$db, $stack);
        } catch (\Throwable $e) {
            $run->fail($e);
        } finally {
            $run->finish(microtime(true) - $started);
            $run->recordChurn($server?->workerChurn());
            $run->pssBytes = $server?->pssBytes();
            if ($server !== null && $stack === Stack::SEQUENTIAL) {
                preg_match_all('~--dev: (\S+ \[\w+\] leaves \S+ \S+)~', $server->log(), $reports);
                self::$devReports[static::app()] = array_values(array_unique($reports[1]));
            }
            $server?->stop();
            self::$logs[static::app() . " $stack"] = $server?->diagnostics() ?? '';
            $copy->remove();
        }
        Matrix::record($run, static::knownFailures()[$stack] ?? null);
        return $run;
    }

    private function explain(Run $run): string
    {
        return $run->transcript() . "\n\nserver log (tail):\n" . substr(self::$logs["{$run->app} {$run->stack}"] ?? '', -3000);
    }
}
