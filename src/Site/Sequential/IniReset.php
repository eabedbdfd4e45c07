<?php

declare(strict_types=1);

namespace Kiln\Site\Sequential;

use Kiln\Site\Sequential\Engine\ExecutorGlobals;
use Kiln\Site\Sequential\Engine\Native;

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
 * PHP's `@` operator enters error_reporting in that table too (it changes the value for the length of the
 * silenced expression), and the worker's own I/O between two requests is silenced: so the table holding
 * error_reporting alone, at its start-up value, counts as unchanged (three more reads); resetting it would
 * only make the next `@` allocate the table again.
 *
 * Otherwise (no FFI, or the app changed a setting at load time, which zend_ini_deactivate() would undo),
 * it compares ini_get_all() with a snapshot after every request (~10 µs) and sets back what differs.
 */
final class IniReset
{
    /** @var array<string, string|null>|null snapshot, in the comparing mode */
    private ?array $snapshot = null;

    /** zend_array: arData, then nNumUsed and nNumOfElements (as one 64-bit word), in 64-bit words. */
    private const DATA = 2;
    private const USED_AND_COUNT = 3;

    /** Bucket: val (16 bytes), h, key: the key's word. */
    private const KEY = 3;

    /** nNumUsed = nNumOfElements = 1. */
    private const ONE_ENTRY = (1 << 32) | 1;

    /** EG(modified_ini_directives), in the native mode. */
    private readonly ?\FFI\CData $modified;

    /** Address of PHP's "error_reporting" key string, as `@` enters it in the table (0: not known). */
    private int $silenceKey = 0;

    /** @var list<string> see changedAtStart() */
    private array $changed = [];

    /** error_reporting at start-up. */
    private readonly int $errorReporting;

    /** The table and its buckets last looked at, as 64-bit words (the allocator tends to hand out the same). */
    private int $table = 0;

    private ?\FFI\CData $tableWords = null;

    private int $data = 0;

    private ?\FFI\CData $dataWords = null;

    private function __construct(private readonly ?ExecutorGlobals $executor)
    {
        $this->modified = $executor === null ? null : $executor->native->words($executor->base + $executor->modifiedIni);
        $this->errorReporting = error_reporting();
    }

    /** Takes the current settings as the ones every request starts from. */
    public static function fromCurrent(?ExecutorGlobals $executor = null): self
    {
        $changed = self::changedSinceStartup();
        if ($executor !== null && $changed === []) {
            $executor->native->ffi->zend_ini_deactivate(); // @phpstan-ignore method.notFound (FFI)
            if ($executor->native->u64($executor->base + $executor->modifiedIni) === 0) {
                $reset = new self($executor);
                $reset->learnSilenceKey();
                return $reset;
            }
        }
        $reset = new self(null);
        $reset->snapshot = self::current();
        $reset->changed = $changed;
        return $reset;
    }

    /**
     * The settings that kept the native reset off: changed at run time before the worker's first script (PHP's
     * reset would take them back to their startup values). Empty when it is on, or when the engine lacks it.
     *
     * @return list<string>
     */
    public function changedAtStart(): array
    {
        return $this->changed;
    }

    public function isNative(): bool
    {
        return $this->executor !== null;
    }

    public function reset(): void
    {
        if ($this->modified !== null && $this->executor !== null) {
            $table = $this->modified[0];
            if ($table !== 0 && !$this->onlySilenced(Native::int($table))) {
                $this->deactivate();
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

    /** Whether the table at $table holds error_reporting alone, and error_reporting is at its start-up value. */
    private function onlySilenced(int $table): bool
    {
        if ($this->silenceKey === 0 || $this->executor === null || error_reporting() !== $this->errorReporting) {
            return false;
        }
        $native = $this->executor->native;
        if ($table !== $this->table || $this->tableWords === null) {
            [$this->table, $this->tableWords] = [$table, $native->words($table)];
        }
        if ($this->tableWords[self::USED_AND_COUNT] !== self::ONE_ENTRY) {
            return false;
        }
        $data = Native::int($this->tableWords[self::DATA]);
        if ($data !== $this->data || $this->dataWords === null) {
            [$this->data, $this->dataWords] = [$data, $native->words($data)];
        }
        return $this->dataWords[self::KEY] === $this->silenceKey;
    }

    /** Restores every setting changed (the FFI call in a method of its own, out of reset()'s compiled trace). */
    private function deactivate(): void
    {
        $this->executor?->native->ffi->zend_ini_deactivate(); // @phpstan-ignore method.notFound (FFI)
    }

    /** Silences an expression once to see which key `@` enters in the (empty) table, then empties it again. */
    private function learnSilenceKey(): void
    {
        if ($this->modified === null || $this->executor === null || $this->modified[0] !== 0) {
            return;
        }
        $native = $this->executor->native;
        @error_clear_last(); // the silence is the point
        $table = Native::int($this->modified[0]);
        if ($table !== 0 && $native->readable($table, 32) && $native->u64($table + self::USED_AND_COUNT * 8) === self::ONE_ENTRY) {
            $key = $native->u64($native->u64($table + self::DATA * 8) + self::KEY * 8);
            if ($native->isZendString($key, 'error_reporting')) {
                $this->silenceKey = $key;
            }
        }
        $this->deactivate();
    }

    /** @return array<string, string|null> */
    private static function current(): array
    {
        $all = ini_get_all(null, false);
        /** @var array<string, string|null> $all */
        return \is_array($all) ? $all : [];
    }

    /** @return list<string> the settings whose value is not their startup value (['*'] when PHP cannot tell) */
    private static function changedSinceStartup(): array
    {
        $all = ini_get_all(null, true);
        if (!\is_array($all)) {
            return ['*'];
        }
        $changed = [];
        foreach ($all as $name => $entry) {
            if (\is_array($entry) && ($entry['global_value'] ?? null) !== ($entry['local_value'] ?? null)) {
                $changed[] = (string) $name;
            }
        }
        return $changed;
    }
}
