<?php

declare(strict_types=1);

namespace Kiln\Site\Sequential;

use Kiln\Site\Sequential\Engine\ExecutorGlobals;

/**
 * Puts every ini setting a request changed (ini_set(), set_time_limit(), error_reporting(), set_include_path(),
 * session_*() settings…) back to what it was before the request.
 *
 * Natively when possible: PHP records each setting changed at run time in EG(modified_ini_directives), with
 * the value it had before, and a web SAPI restores them all at the end of each request
 * (zend_ini_deactivate()). When that table is empty at start (nothing changed the settings since start-up,
 * or everything changed was already back to its start-up value), this does the same per request: one read
 * when the request changed nothing, one call when it did.
 *
 * Otherwise (no FFI, or the app changed a setting at load time, which zend_ini_deactivate() would undo),
 * it compares ini_get_all() with a snapshot after every request (~10 µs) and sets back what differs.
 */
final class IniReset
{
    /** @var array<string, string|null>|null snapshot, in the comparing mode */
    private ?array $snapshot = null;

    /** EG(modified_ini_directives), in the native mode. */
    private readonly ?\FFI\CData $modified;

    private function __construct(private readonly ?ExecutorGlobals $executor)
    {
        $this->modified = $executor === null ? null : $executor->native->words($executor->base + $executor->modifiedIni);
    }

    /** Takes the current settings as the ones every request starts from. */
    public static function fromCurrent(?ExecutorGlobals $executor = null): self
    {
        if ($executor !== null && self::allAtStartupValue()) {
            $executor->native->ffi->zend_ini_deactivate(); // @phpstan-ignore method.notFound (FFI)
            if ($executor->native->u64($executor->base + $executor->modifiedIni) === 0) {
                return new self($executor);
            }
        }
        $reset = new self(null);
        $reset->snapshot = self::current();
        return $reset;
    }

    public function isNative(): bool
    {
        return $this->executor !== null;
    }

    public function reset(): void
    {
        if ($this->modified !== null && $this->executor !== null) {
            if ($this->modified[0] !== 0) {
                $this->executor->native->ffi->zend_ini_deactivate(); // @phpstan-ignore method.notFound (FFI)
            }
            return;
        }
        \assert($this->snapshot !== null);
        $current = self::current();
        if ($current === $this->snapshot) {
            return;
        }
        foreach ($this->snapshot as $name => $value) {
            if (($current[$name] ?? null) !== $value) {
                @ini_set($name, (string) $value);
            }
        }
    }

    /** @return array<string, string|null> */
    private static function current(): array
    {
        $all = ini_get_all(null, false);
        /** @var array<string, string|null> $all */
        return \is_array($all) ? $all : [];
    }

    private static function allAtStartupValue(): bool
    {
        $all = ini_get_all(null, true);
        if (!\is_array($all)) {
            return false;
        }
        foreach ($all as $entry) {
            if (\is_array($entry) && ($entry['global_value'] ?? null) !== ($entry['local_value'] ?? null)) {
                return false;
            }
        }
        return true;
    }
}
