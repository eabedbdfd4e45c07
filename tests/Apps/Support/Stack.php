<?php

declare(strict_types=1);

namespace Kiln\Tests\Apps\Support;

use Kiln\Tests\Support\ApacheProcess;
use Kiln\Tests\Support\KilnProcess;
use Kiln\Tests\Support\PhpFpmProcess;

/**
 * One server stack serving an application's document root: Kiln on one tier, Kiln in front of php-fpm, or the
 * reference, Apache 2.4 + mod_php with `AllowOverride All` and what Debian's apache2.conf adds (`.ht*` denied).
 * Started with start(), stopped by PID through the process helpers of tests/Support.
 */
final class Stack
{
    public const APACHE = 'apache-mod_php';
    public const ISOLATED = 'kiln-isolated';
    public const SEQUENTIAL = 'kiln-sequential';
    public const FORK = 'kiln-fork';
    public const FPM = 'kiln-fastcgi-php-fpm';

    /** The matrix columns, in order. */
    public const ALL = [self::APACHE, self::ISOLATED, self::SEQUENTIAL, self::FORK, self::FPM];

    private ?KilnProcess $kiln = null;
    private ?ApacheProcess $apache = null;
    private ?PhpFpmProcess $fpm = null;
    private string $stoppedLog = '';

    private function __construct(public readonly string $name) {}

    /**
     * @param array<string, string> $phpIni php.ini settings of the site, set the way each server sets them
     * @param array<string, string> $env environment of the site's PHP (Kiln: --pass-env; php-fpm: env[]; not Apache)
     */
    public static function start(string $name, string $documentRoot, array $phpIni = [], array $env = []): self
    {
        $stack = new self($name);
        $kilnArgs = ['--workers=2', '--time-limit=60', '--access-log=-', '--log-level=info'];
        foreach ($phpIni as $key => $value) {
            $kilnArgs[] = "--php-ini=$key=$value";
        }
        foreach (array_keys($env) as $key) {
            $kilnArgs[] = "--pass-env=$key";
        }
        switch ($name) {
            case self::APACHE:
                $extra = self::apacheExtra((string) realpath($documentRoot));
                foreach ($phpIni as $key => $value) {
                    $extra .= "\nphp_admin_value $key \"$value\"";
                }
                $stack->apache = ApacheProcess::start($documentRoot, 4, $extra);
                break;
            case self::FPM:
                $stack->fpm = PhpFpmProcess::start(children: 4, ini: $phpIni, env: $env);
                $stack->kiln = KilnProcess::start($documentRoot, [...$kilnArgs, '--tier=fastcgi', '--fastcgi=' . $stack->fpm->address()], $env, 20.0);
                break;
            case self::SEQUENTIAL:
                // --dev: the tier reports what a script leaves to the next request; the apps' runs must show no report.
                $stack->kiln = KilnProcess::start($documentRoot, [...$kilnArgs, '--tier=sequential', '--dev'], $env, 20.0);
                break;
            case self::ISOLATED:
            case self::FORK:
                $stack->kiln = KilnProcess::start($documentRoot, [...$kilnArgs, '--tier=' . substr($name, 5)], $env, 20.0);
                break;
            default:
                throw new \ValueError("unknown stack $name; one of " . implode(', ', self::ALL));
        }
        return $stack;
    }

    /** What Debian's apache2.conf and the apps' Debian snippets add to the generic test vhost. */
    private static function apacheExtra(string $root): string
    {
        $m = ApacheProcess::MODULES;
        $modules = '';
        foreach (['alias', 'access_compat', 'authz_host', 'env', 'setenvif', 'headers', 'expires', 'filter', 'deflate'] as $module) {
            $modules .= "LoadModule {$module}_module $m/mod_$module.so\n";
        }
        return <<<CONF
            $modules
            <Directory "$root">
                Options FollowSymLinks
                AllowOverride All
            </Directory>
            <FilesMatch "^\\.ht">
                Require all denied
            </FilesMatch>
            CONF;
    }

    public function baseUrl(): string
    {
        return $this->apache?->baseUrl() ?? $this->kiln?->baseUrl() ?? throw new \Error('stack not started');
    }

    public function isKiln(): bool
    {
        return $this->kiln !== null;
    }

    /** What the server has logged so far, whole (Kiln's stderr with its access log, or Apache's error log). */
    public function log(): string
    {
        return $this->apache?->errorLog() ?? (string) $this->kiln?->log();
    }

    /** The server's own log, for failure messages; after stop(), as it was when the server had stopped. */
    public function diagnostics(): string
    {
        if ($this->kiln === null && $this->apache === null && $this->fpm === null) {
            return $this->stoppedLog;
        }
        $log = $this->apache?->diagnostics() ?? substr((string) $this->kiln?->log(), -4000);
        return $log . ($this->fpm !== null ? "\n" . $this->fpm->diagnostics() : '');
    }

    /**
     * On Kiln: how many requests the access log shows and how many times a worker was replaced meanwhile (the
     * sequential tier replaces its worker after a script that exit()s or registers a shutdown function).
     *
     * @return array{requests: int, replaced: int}|null null when this stack is not Kiln
     */
    public function workerChurn(): ?array
    {
        if ($this->kiln === null) {
            return null;
        }
        $log = $this->kiln->log();
        // A worker that ends on purpose (exit(), a shutdown function) says so first ("will be replaced: …") and its
        // exit is then logged below info; one that crashed is logged as it exits. Each pid counts once.
        preg_match_all('~\] worker \d+ \(pid (\d+)\) (?:exited|will be replaced)~', $log, $ended);
        return [
            'requests' => (int) preg_match_all('~^127\.0\.0\.1 - - \[~m', $log),
            'replaced' => \count(array_unique($ended[1])),
        ];
    }

    /**
     * The memory of the stack's whole process tree (every server process it started and their descendants:
     * Kiln's supervisor, workers and php-cgi parent and children; Apache's; php-fpm's), summed PSS from
     * /proc/PID/smaps_rollup as smem reads it. Null when Linux does not tell.
     */
    public function pssBytes(): ?int
    {
        $roots = array_filter([$this->kiln?->pid(), $this->apache?->pid(), $this->fpm?->pid()]);
        $parents = [];
        foreach (glob('/proc/[0-9]*/stat') ?: [] as $file) {
            $stat = (string) @file_get_contents($file);
            $close = strrpos($stat, ')');
            if ($close !== false) {
                $parents[(int) basename(\dirname($file))] = (int) explode(' ', substr($stat, $close + 2))[1];
            }
        }
        $tree = array_values($roots);
        for ($i = 0; $i < \count($tree); $i++) {
            foreach ($parents as $pid => $parent) {
                if ($parent === $tree[$i]) {
                    $tree[] = $pid;
                }
            }
        }
        $total = null;
        foreach ($tree as $pid) {
            if (preg_match('/^Pss:\s+(\d+) kB$/m', (string) @file_get_contents("/proc/$pid/smaps_rollup"), $m) === 1) {
                $total = ($total ?? 0) + (int) $m[1] * 1024;
            }
        }
        return $total;
    }

    public function stop(): void
    {
        $this->kiln?->stop();
        $this->apache?->stop();
        $this->fpm?->stop();
        if ($this->kiln !== null || $this->apache !== null || $this->fpm !== null) {
            // Kept: what the supervisor logs as it stops (a worker's exit code or signal) explains a failed step.
            $this->stoppedLog = $this->diagnostics();
        }
        $this->kiln = $this->apache = $this->fpm = null;
    }

    public function __destruct()
    {
        $this->stop();
    }
}
