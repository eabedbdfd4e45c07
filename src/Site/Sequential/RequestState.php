<?php

declare(strict_types=1);

namespace Kiln\Site\Sequential;

use Kiln\Site\Sequential\Engine\CwdWatch;
use Kiln\Site\Sequential\Engine\SavedUmask;
use Kiln\Site\Sequential\Engine\SessionId;

/**
 * What a script may change in the process that a web SAPI resets at the end of every request, set back
 * here: the global variables it created (unset, so their destructors run), the error and exception handler
 * stacks, the working directory (scripts run in their own directory, as under php-fpm), the session (written,
 * closed, its id forgotten so the next visitor gets their own), the response code and headers, the default
 * timezone, umask and locale. Settings (ini) are IniReset's, the output ScriptOutput's.
 *
 * The working directory is put back at once by end(): a chdir() back when begin() moved (with opcache, PHP's
 * chdir() is followed by a getcwd() to keep opcache's idea of the directory right: two system calls, about
 * 0.6 µs here), else a getcwd() to see whether the script moved (0.24 µs), unless CwdWatch shows that it
 * did not call chdir(). A worker serving a document root works in it (ServiceFactory), so a script in the
 * root usually costs no system call for it.
 *
 * begin() before the script, end() after (also when it threw). The handler stacks start empty, as under a
 * web SAPI (set_error_handler() returns null); end() pops them until no handler is current, however many
 * the script pushed (a script that pushed null itself leaves the handlers below it in place).
 *
 * @api reused by the fork tier
 */
final class RequestState
{
    /** A bound on the pops, in case a handler cannot be popped. */
    private const MAX_HANDLERS = 256;

    private const SUPERGLOBALS = ['_GET', '_POST', '_COOKIE', '_FILES', '_SERVER', '_REQUEST', '_ENV'];

    /** @var array<string, mixed> the globals that exist between requests, superglobals included, put back after each */
    private readonly array $globals;

    /** @var array<string, mixed> the globals of the process other than the superglobals */
    private readonly array $others;

    /** The worker's working directory, put back after each script. */
    private readonly string $cwd;

    /** begin() changed the working directory. */
    private bool $moved = false;

    private readonly bool $sessions;

    private readonly string $timezone;

    /**
     * A zone was set with date_default_timezone_set() (by resetZone(), after a script that set one): PHP then
     * ignores date.timezone for the rest of the process, so begin() applies the setting itself.
     */
    private bool $zonePinned = false;

    private readonly int $umask;

    private readonly string $locale;

    /**
     * Takes the globals of the process as the ones every request ends with (the superglobals, and the
     * variables of the entry script such as bin/kiln's), minus the CLI's `$argv` and `$argc`, which a script
     * under php-fpm does not have.
     */
    public function __construct(
        private readonly ?SessionId $sessionId = null,
        private readonly ?SavedUmask $savedUmask = null,
        private readonly ?CwdWatch $cwdWatch = null,
    ) {
        unset($GLOBALS['argv'], $GLOBALS['argc']);
        $globals = [];
        foreach (array_keys($GLOBALS) as $name) {
            $globals[(string) $name] = $GLOBALS[$name];
        }
        // Named one by one: $_SERVER and $_ENV exist only once code names them (auto_globals_jit).
        $this->globals = ['_GET' => $_GET, '_POST' => $_POST, '_COOKIE' => $_COOKIE, '_FILES' => $_FILES,
            '_SERVER' => $_SERVER, '_REQUEST' => $_REQUEST, '_ENV' => $_ENV] + $globals;
        $this->others = array_diff_key($this->globals, array_flip(self::SUPERGLOBALS));
        $this->cwd = (string) getcwd();
        $this->sessions = \extension_loaded('session');
        $this->timezone = date_default_timezone_get();
        $this->umask = umask();
        $this->savedUmask?->clear();
        $this->locale = (string) setlocale(\LC_ALL, '0');
    }

    /** Before the script (its php_value settings made): its directory as the working directory, a clean response. */
    public function begin(string $scriptDirectory): void
    {
        if ($this->zonePinned) {
            $this->followZoneSetting();
        }
        if ($scriptDirectory !== $this->cwd) {
            $this->moved = @chdir($scriptDirectory);
        } else {
            $this->cwdWatch?->arm();
        }
        header_remove();
        http_response_code(200);
        error_clear_last();
        if ($this->sessionId === null && $this->sessions) {
            // Without SessionId, PHP would only make new sessions after session_id(''): give it the cookie's.
            $cookie = $_COOKIE[session_name()] ?? null;
            @session_id(\is_string($cookie) ? $cookie : '');
        }
    }

    /** The exception handler the script left in place, or null. */
    public static function exceptionHandler(): ?callable
    {
        $handler = set_exception_handler(null);
        restore_exception_handler();
        return $handler;
    }

    /** After the script, once its output and headers are collected. */
    public function end(): void
    {
        if ($this->sessions) {
            if (session_status() === \PHP_SESSION_ACTIVE) {
                session_write_close();
            }
            if ($this->sessionId !== null) {
                $this->sessionId->forget();
            } elseif (session_id() !== '') {
                @session_id('');
            }
            unset($GLOBALS['_SESSION']);
        }
        header_remove();
        // Until no handler is current (bounded, in case one cannot be popped).
        for ($i = 0; $i < self::MAX_HANDLERS && set_error_handler(null) !== null; $i++) {
            restore_error_handler(); // undoes the probe
            restore_error_handler(); // pops one
        }
        restore_error_handler(); // undoes the last probe
        for ($i = 0; $i < self::MAX_HANDLERS && set_exception_handler(null) !== null; $i++) {
            restore_exception_handler();
            restore_exception_handler();
        }
        restore_exception_handler();
        // The superglobals as they were (named: a fetch by a constant name is cached), then the worker's own.
        $globals = $this->globals;
        $_GET = $globals['_GET'];
        $_POST = $globals['_POST'];
        $_COOKIE = $globals['_COOKIE'];
        $_FILES = $globals['_FILES'];
        $_SERVER = $globals['_SERVER'];
        $_REQUEST = $globals['_REQUEST'];
        $_ENV = $globals['_ENV'];
        foreach ($this->others as $name => $value) {
            $GLOBALS[$name] = $value;
        }
        // The script's own directory, or wherever the script moved (CwdWatch can tell it did not without getcwd()).
        if ($this->moved || (($this->cwdWatch === null || !$this->cwdWatch->untouched()) && getcwd() !== $this->cwd)) {
            @chdir($this->cwd);
            $this->moved = false;
        }
        // Each request starts with PHP's stat cache empty, as under a web SAPI: what the script stat'ed goes
        // (CwdWatch's marker may stay: it names the current directory, which a chdir() drops from the cache).
        if ($this->cwdWatch === null || !$this->cwdWatch->alone()) {
            clearstatcache();
        }
        // A script's umask(0) must not outlive it. umask() is two system calls (PHP reads the old mask first):
        // where SavedUmask can tell, only after a script that called it.
        if ($this->savedUmask === null) {
            umask($this->umask);
        } elseif ($this->savedUmask->changed()) {
            umask($this->umask);
            $this->savedUmask->clear();
        }
        if ($this->locale !== '' && setlocale(\LC_ALL, '0') !== $this->locale) {
            setlocale(\LC_ALL, $this->locale);
        }
    }

    /**
     * After the settings are reset: a zone the script set with date_default_timezone_set() is undone. PHP keeps
     * such a zone until the process ends and ignores date.timezone from then on; this can only set another,
     * so from the first script that set one, begin() sets the zone date.timezone names before each script (a
     * `php_value date.timezone` in .htaccess keeps working). What stays different from a web SAPI: in such a
     * worker, a script's own ini_set('date.timezone', …) does not change the zone (docs/tiers.md).
     */
    public function resetZone(): void
    {
        if (date_default_timezone_get() !== $this->timezone) {
            date_default_timezone_set($this->timezone);
            $this->zonePinned = true;
        }
    }

    private function followZoneSetting(): void
    {
        $setting = (string) \ini_get('date.timezone');
        $zone = $setting === '' ? $this->timezone : $setting;
        if (date_default_timezone_get() !== $zone && !@date_default_timezone_set($zone)) {
            date_default_timezone_set($this->timezone); // not a zone PHP knows: PHP would fall back to UTC and warn
        }
    }

    /**
     * Unsets the globals the script created: objects only they held are destroyed now, and what their
     * destructors print is still part of the response (call before collecting the output). The globals
     * that existed before are put back by end().
     */
    public function unsetScriptGlobals(): void
    {
        // The names only: a copy of the values would keep every object alive until the loop ends, and a
        // destructor would then no longer see the other globals, which it does under php-fpm.
        // $_SESSION stays for closeSession(): PHP writes the session after the destructors, and a save handler's
        // write() may read $_SESSION itself (Zabbix's cookie sessions do).
        foreach (array_keys(array_diff_key($GLOBALS, $this->globals)) as $name) {
            if ($name !== '_SESSION') {
                unset($GLOBALS[$name]);
            }
        }
    }

    /**
     * Writes and closes an open session (its data must be saved before the response leaves, and a cookie its save
     * handler sets must reach the response), then unsets $_SESSION if the script made it.
     */
    public function closeSession(): void
    {
        if (\extension_loaded('session') && session_status() === \PHP_SESSION_ACTIVE) {
            session_write_close();
        }
        if (!\array_key_exists('_SESSION', $this->globals)) {
            unset($GLOBALS['_SESSION']);
        }
    }
}
