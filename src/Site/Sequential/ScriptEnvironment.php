<?php

declare(strict_types=1);

namespace Kiln\Site\Sequential;

/**
 * getenv() for a script in the worker, as under a web SAPI: php-fpm and php-cgi answer getenv('REQUEST_METHOD')
 * (and every other CGI meta-variable) from the request through the SAPI's getenv hook, the CLI only from the
 * process environment, since its `sapi_module.getenv` is NULL.
 *
 * Kiln sets that hook (through FFI, once per process) to a function that answers from the request's variables
 * while a script runs and defers to the process environment otherwise, as php-fpm does; it costs nothing
 * until a script calls getenv(). `getenv($name, true)` still reads the process environment only, as PHP
 * documents. Where the hook cannot be set, the variables are put into the process environment for the
 * script's run instead (putenv() per variable: correct, but slower).
 */
final class ScriptEnvironment
{
    /** Index of getenv among the function pointers of sapi_module_struct (after name, pretty_name). */
    private const GETENV = 9;

    /** $_SERVER entries PHP adds itself, which php-fpm's getenv() does not answer. */
    private const NOT_VARIABLES = ['PHP_SELF' => true, 'REQUEST_TIME' => true, 'REQUEST_TIME_FLOAT' => true,
        'PHP_AUTH_USER' => true, 'PHP_AUTH_PW' => true, 'PHP_AUTH_DIGEST' => true];

    /** @var array<array-key, mixed>|null the running script's variables ($_SERVER as it started), read by the hook */
    private static ?array $current = null;

    /** The hook's last answer: PHP copies it at once, so it is freed on the next call. */
    private static ?\FFI\CData $answer = null;

    private static ?\FFI $ffi = null;

    private static ?bool $hooked = null;

    /** @var array<string, string|false> name => the worker's own value, for the putenv() fallback */
    private array $saved = [];

    /**
     * @param array<array-key, mixed> $variables the request's CGI meta-variables (or the `$_SERVER` made of them:
     *                                           PHP_SELF, REQUEST_TIME(_FLOAT) and PHP_AUTH_* are left out)
     */
    public function apply(array $variables): void
    {
        if (self::$hooked ??= self::hook()) {
            self::$current = $variables;
            return;
        }
        foreach ($variables as $name => $value) {
            if (!\is_string($value) || isset(self::NOT_VARIABLES[$name])) {
                continue;
            }
            $name = (string) $name;
            if (!isset($this->saved[$name])) {
                $this->saved[$name] = getenv($name, true);
            }
            putenv("$name=$value");
        }
    }

    /** Gives the worker its environment back. */
    public function restore(): void
    {
        self::$current = null;
        foreach ($this->saved as $name => $value) {
            putenv($value === false ? $name : "$name=$value");
        }
        $this->saved = [];
    }

    /** Whether the SAPI getenv hook is in place in this process (set on the first apply()). */
    public static function hooked(): bool
    {
        return self::$hooked ??= self::hook();
    }

    private static function hook(): bool
    {
        if (\PHP_SAPI !== 'cli' || HeaderHook::unsupportedReason() !== null) {
            return false;
        }
        try {
            $ffi = \FFI::cdef('typedef struct { void *fn[' . self::GETENV . ']; char *(*getenv)(const char *name, size_t len); '
                . 'void *rest[14]; } sapi_module_struct; extern sapi_module_struct sapi_module;');
            $module = $ffi->sapi_module; // @phpstan-ignore property.notFound (FFI global)
            \assert($module instanceof \FFI\CData);
            $functions = $module->fn; // @phpstan-ignore property.notFound (FFI struct)
            \assert($functions instanceof \FFI\CData);
            $name = $functions[0];
            $chars = $name instanceof \FFI\CData ? $ffi->cast('char*', $name) : null;
            if (!$chars instanceof \FFI\CData || \FFI::string($chars) !== 'cli' || $module->getenv !== null) { // @phpstan-ignore property.notFound
                return false;
            }
            self::$ffi = $ffi;
            $module->getenv = self::lookup(...);
            return true;
        } catch (\FFI\Exception) {
            return false;
        }
    }

    /**
     * The hook: the running script's variable, or NULL (PHP then reads the process environment). FFI hands a
     * `const char *` argument over as a PHP string. It must not throw: PHP aborts on an exception in an FFI callback.
     */
    private static function lookup(string|\FFI\CData $name, int $length): ?\FFI\CData
    {
        if (self::$answer !== null) {
            \FFI::free(self::$answer);
            self::$answer = null;
        }
        if (self::$current === null) {
            return null;
        }
        $key = \is_string($name) ? substr($name, 0, $length) : \FFI::string($name, max(0, $length));
        $value = self::$current[$key] ?? null;
        if (!\is_string($value) || isset(self::NOT_VARIABLES[$key]) || self::$ffi === null) {
            return null;
        }
        $buffer = self::$ffi->new('char[' . (\strlen($value) + 1) . ']', false);
        \assert($buffer instanceof \FFI\CData);
        \FFI::memcpy($buffer, $value . "\0", \strlen($value) + 1);
        self::$answer = $buffer;
        return self::$ffi->cast('char*', $buffer);
    }
}
