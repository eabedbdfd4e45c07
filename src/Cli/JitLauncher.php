<?php

declare(strict_types=1);

namespace Kiln\Cli;

use Kiln\Kiln;

/**
 * Workers run hot loops for hours: they get opcache and the tracing JIT (measured here: +20–40% req/s
 * on a hello-world route). PHP's CLI starts with both off and the JIT buffer can only be sized at
 * start-up, so `kiln serve` re-executes PHP once with them on — unless the user already configured
 * opcache for the CLI or turned it off with --jit=off / KILN_JIT=off.
 */
final class JitLauncher
{
    public const SETTINGS = [
        'opcache.enable_cli' => '1',
        ...Kiln::JIT,
        // opcache does not cache a file modified less than this many seconds before the request started, and
        // under the CLI the one request is the process: every file written after (start - 2 s) would be
        // compiled again at each include, for the worker's life. The sequential tier includes its scripts
        // on every request, so a site deployed just before `kiln serve`, or edited while it runs, would run
        // uncached (measured: hello.php at about 0.75x). 0 caches every file; docs/tiers.md says what that means
        // for a file caught half-written.
        'opcache.file_update_protection' => '0',
        // Node-shared state (rate limits, later sessions and cache) uses APCu when it is on; the
        // workers share its memory because the supervisor maps it before forking them.
        'apc.enable_cli' => '1',
    ];

    /** The mode of `--dev`: opcache and APCu as with the JIT, but no JIT buffer. */
    public const OPCACHE_ONLY = 'opcache';

    /** Set in the re-executed process, so a failed JIT set-up never loops. */
    private const GUARD = 'KILN_JIT_LAUNCHED';

    /**
     * Replaces this process with a PHP running the same `kiln serve` command, started with opcache and the JIT when
     * that is wanted and possible, and with $startup on its command line. Returns (without exec) when there is nothing
     * to change or exec is not possible. $mode is `on`, `off` or OPCACHE_ONLY (the same settings with the JIT buffer
     * at 0).
     *
     * @param list<string> $serveArgs the arguments after `serve`
     * @param array<string, string> $startup more settings for PHP's command line (name => value), so that they are
     *        startup values, not changed at run time: the sequential tier resets the settings a script changes
     *        natively (IniReset) only when every setting is at its startup value as a worker starts. So PHP is
     *        started again for them alone when one differs, with --jit=off or an opcache the user configured too.
     */
    public static function relaunch(string $mode, array $serveArgs, array $startup = []): void
    {
        if (getenv(self::GUARD) !== false || !\function_exists('pcntl_exec')) {
            return;
        }
        $settings = self::wanted($mode, \extension_loaded('Zend OPcache'), filter_var(\ini_get('opcache.enable_cli'), FILTER_VALIDATE_BOOL));
        $differs = array_filter($startup, static fn(string $value, string $name): bool => \ini_get($name) !== $value, ARRAY_FILTER_USE_BOTH);
        if ($settings === [] && $differs === []) {
            return;
        }
        $env = getenv();
        $env[self::GUARD] = '1';
        $kiln = \dirname(__DIR__, 2) . '/bin/kiln';
        // The user's own options for PHP come after Kiln's opcache settings, so a -d of theirs wins over those; the
        // startup settings come last: they carry Kiln's own options (--memory-limit), which win over a -d.
        @pcntl_exec(PHP_BINARY, [...self::flags($settings), ...self::ownPhpOptions(), ...self::flags($startup), $kiln, 'serve', ...$serveArgs], $env);
        // Only reached when exec failed: serve without the JIT (and with the startup settings set at run time) rather
        // than not at all.
    }

    /**
     * The opcache settings to start PHP with: none with --jit=off, without opcache, or when the user turned
     * opcache on for the CLI (their configuration is kept).
     *
     * @return array<string, string>
     */
    public static function wanted(string $mode, bool $opcacheLoaded, bool $opcacheOnForCli): array
    {
        if ($mode === 'off' || !$opcacheLoaded || $opcacheOnForCli) {
            return [];
        }
        return $mode === self::OPCACHE_ONLY ? ['opcache.jit_buffer_size' => '0'] + self::SETTINGS : self::SETTINGS;
    }

    /**
     * @param array<string, string> $settings
     * @return list<string>
     */
    private static function flags(array $settings): array
    {
        $flags = [];
        foreach ($settings as $name => $value) {
            $flags[] = '-d';
            $flags[] = "$name=$value";
        }
        return $flags;
    }

    /**
     * The options this PHP was started with before the script (`php -d memory_limit=1G -n bin/kiln …`), from
     * /proc/self/cmdline; empty when they cannot be told apart (no /proc, or the script not found there).
     *
     * @return list<string>
     */
    public static function ownPhpOptions(): array
    {
        $raw = @file_get_contents('/proc/self/cmdline');
        $argv = $_SERVER['argv'] ?? null;
        $script = \is_array($argv) ? ($argv[0] ?? null) : null;
        if (!\is_string($raw) || !\is_string($script) || $script === '') {
            return [];
        }
        $args = explode("\0", rtrim($raw, "\0"));
        $at = array_search($script, $args, true);
        if (!\is_int($at) || $at < 1) {
            return [];
        }
        $options = \array_slice($args, 1, $at - 1);
        if (end($options) === '-f') {
            array_pop($options); // php -f SCRIPT: -f is given again by the script's place
        }
        return $options;
    }

    /**
     * What to tell the user when opcache runs in this process with a file_update_protection other than 0: the
     * case of a CLI whose opcache the user configured (Kiln did not relaunch PHP with its settings). Null when
     * all is well, or opcache is off.
     */
    public static function fileUpdateProtectionWarning(): ?string
    {
        if (!filter_var(\ini_get('opcache.enable'), FILTER_VALIDATE_BOOL) || !filter_var(\ini_get('opcache.enable_cli'), FILTER_VALIDATE_BOOL)) {
            return null;
        }
        $seconds = (string) \ini_get('opcache.file_update_protection');
        return $seconds === '0' || $seconds === '' ? null
            : "opcache.file_update_protection=$seconds: in a long-running worker opcache never caches a file written less than $seconds s "
            . 'before Kiln started or while it runs, and compiles it at every include; run PHP with -d opcache.file_update_protection=0';
    }

    /** Whether the JIT is compiling in this process (for the ready line). */
    public static function active(): bool
    {
        if (!\function_exists('opcache_get_status')) {
            return false;
        }
        $status = @opcache_get_status(false);
        return \is_array($status) && \is_array($status['jit'] ?? null) && ($status['jit']['on'] ?? false) === true;
    }
}
