<?php

declare(strict_types=1);

namespace Kiln\Site\Sequential;

/**
 * Warns about a bootstrap file the tier can run only once per worker although it sets up each request.
 *
 * A file loaded with require_once that declares something stays loaded in the worker (Declarations), so a later
 * request's require_once skips it. When the same file also calls session_start(), header() or the like outside
 * any function (a legacy `common.php` that declares its helpers and starts the session), only the worker's first
 * request gets that call: later ones run without a session or without the headers. Nothing here changes what
 * runs; the log says which file and call, once per file and worker, and points to the isolated tier.
 */
final class SetupOnce
{
    /** Calls that set up the request being served: made once per worker, they are missing from every later request. */
    private const SETUP = [
        'session_start', 'session_name', 'session_id', 'session_cache_limiter', 'session_set_save_handler',
        'header', 'setcookie', 'setrawcookie', 'http_response_code', 'ob_start',
    ];

    /** @var array<string, true> files looked at already (each file once per worker) */
    private array $seen = [];

    /** Kiln's own tree: its files are never the site's. */
    private readonly string $kiln;

    /** @param \Closure(string, string): void $log level, message */
    public function __construct(private readonly \Closure $log)
    {
        $this->kiln = \dirname(__DIR__, 2) . '/';
    }

    /**
     * @param list<string> $files the files the request included for the first time in this worker
     * @param string $script the requested script (run on every request: not looked at)
     */
    public function check(array $files, string $script): void
    {
        foreach ($files as $file) {
            if ($file === $script || isset($this->seen[$file]) || str_starts_with($file, $this->kiln)) {
                continue;
            }
            $this->seen[$file] = true;
            if (!Declarations::inFile($file)) {
                continue; // pure: require_once runs it again on every request
            }
            $call = self::setupCall((string) @file_get_contents($file));
            if ($call !== null) {
                ($this->log)('warning', "$file declares functions, classes or constants, so this tier runs it once per worker "
                    . "(require_once skips it afterwards), but it also calls $call() outside any function: later requests in this "
                    . 'worker run without that call. Serve this app with --tier=isolated (a fresh PHP state per request).');
            }
        }
    }

    /** The first request-setup function the source calls outside any function body, or null. */
    public static function setupCall(string $source): ?string
    {
        $tokens = Declarations::tokens($source);
        if ($tokens === null) {
            return null;
        }
        $braces = []; // per open brace: whether it opens a function's body
        $function = false; // a function (or method, or closure) was named: its body is the next brace
        $previous = null;
        $attribute = 0; // inside #[...]: its bracket depth (an attribute's arguments are no call)
        foreach ($tokens as $i => $token) {
            $id = \is_array($token) ? $token[0] : $token;
            if ($id === T_WHITESPACE || $id === T_COMMENT || $id === T_DOC_COMMENT) {
                continue;
            }
            if ($attribute > 0 || $id === T_ATTRIBUTE) {
                $attribute += match ($id) {
                    T_ATTRIBUTE, '[' => 1,
                    ']' => -1,
                    default => 0,
                };
                continue;
            }
            if ($previous === T_FUNCTION && ($id === '&' || $id === T_AMPERSAND_NOT_FOLLOWED_BY_VAR_OR_VARARG)) {
                continue; // function &name(): $previous stays T_FUNCTION, so the name is not taken for a call
            }
            if ($id === T_FUNCTION) {
                $function = true;
            } elseif ($id === '{' || $id === T_CURLY_OPEN || $id === T_DOLLAR_OPEN_CURLY_BRACES) {
                $braces[] = $function && $id === '{';
                $function = false;
            } elseif ($id === '}') {
                array_pop($braces);
            } elseif ($id === ';') {
                $function = false; // an abstract or interface method: no body
            } elseif (($id === T_STRING || $id === T_NAME_FULLY_QUALIFIED) && !\in_array(true, $braces, true)
                && $previous !== T_OBJECT_OPERATOR && $previous !== T_NULLSAFE_OBJECT_OPERATOR && $previous !== T_DOUBLE_COLON
                && $previous !== T_FUNCTION && $previous !== T_NEW && Declarations::next($tokens, $i) === '(') {
                $name = strtolower(ltrim((string) $token[1], '\\'));
                if (\in_array($name, self::SETUP, true)) {
                    return $name;
                }
            }
            $previous = $id;
        }
        return null;
    }
}
