<?php

declare(strict_types=1);

namespace Kiln\Site\Sequential\Engine;

/**
 * Where three fields of PHP's `executor_globals` (EG()) sit, each found by watching it change as PHP
 * reports the change, never by a hard-coded offset alone:
 *
 * - `current_execute_data`: the slot that points at the running frame, recognised by its function's name;
 * - `symbol_table` (the globals, embedded): the hash whose element count follows `$GLOBALS[new] = …; unset`;
 * - `modified_ini_directives`: the hash pointer whose count follows ini_set() and ini_restore() of a setting.
 *
 * @internal
 */
final class ExecutorGlobals
{
    /** Bytes scanned: zend_executor_globals is ~1.7 KB on 64-bit Linux; the fields sought are in its first KB. */
    private const SCAN = 2048;

    /** Offset of nNumOfElements in a zend_array. */
    public const COUNT = 28;

    private static self|false|null $found = null;

    private function __construct(
        public readonly Native $native,
        public readonly int $base,
        public readonly int $currentFrame,
        public readonly int $symbolTable,
        public readonly int $modifiedIni,
    ) {}

    public static function find(): ?self
    {
        if (self::$found === null) {
            self::$found = false;
            $native = Native::get();
            if ($native !== null && \PHP_INT_SIZE === 8) {
                try {
                    self::$found = self::probe($native) ?? false;
                } catch (\Throwable) {
                    self::$found = false;
                }
            }
        }
        return self::$found === false ? null : self::$found;
    }

    private static function probe(Native $native): ?self
    {
        $base = $native->symbol('executor_globals');
        if (!$native->readable($base, self::SCAN + 64)) {
            return null;
        }
        $frame = self::kilnLocateCurrentFrame($native, $base);
        $symbols = self::locateSymbolTable($native, $base);
        $ini = self::locateModifiedIni($native, $base);
        return $frame === null || $symbols === null || $ini === null ? null : new self($native, $base, $frame, $symbols, $ini);
    }

    /** The slot that, read from inside this very function, points at a frame running a function of this name. */
    private static function kilnLocateCurrentFrame(Native $native, int $base): ?int
    {
        $native->refresh();
        $words = $native->words($base);
        $values = [];
        for ($i = 0; $i < self::SCAN / 8; $i++) {
            $values[$i] = $words[$i]; // read here, in this frame: no call in between
        }
        foreach ($values as $i => $value) {
            $frame = Native::int($value);
            if (!$native->readable($frame, 64)) {
                continue;
            }
            $function = $native->u64($frame + 24);
            if ($native->readable($function, 16) && $native->isZendString($native->u64($function + 8), __FUNCTION__)) {
                return $i * 8;
            }
        }
        return null;
    }

    private static function locateSymbolTable(Native $native, int $base): ?int
    {
        $counts = fn(): array => array_map(fn(int $offset): int => $native->u32($base + $offset + self::COUNT), range(0, self::SCAN - 64, 8));
        $name = 'kiln_probe_' . bin2hex(random_bytes(8));
        $before = $counts();
        $GLOBALS[$name] = 1;
        $during = $counts();
        unset($GLOBALS[$name]);
        $after = $counts();
        $found = [];
        foreach ($before as $i => $count) {
            if ($during[$i] === $count + 1 && $after[$i] === $count) {
                $found[] = $i * 8;
            }
        }
        return \count($found) === 1 ? $found[0] : null;
    }

    private static function locateModifiedIni(Native $native, int $base): ?int
    {
        $setting = 'precision'; // restored by ini_restore() (some settings, highlight.*, are not)
        $all = ini_get_all(null, true);
        $entry = \is_array($all) ? ($all[$setting] ?? null) : null;
        if (!\is_array($entry) || ($entry['global_value'] ?? null) !== ($entry['local_value'] ?? '')) {
            return null; // already modified in this process: its table entry would not move
        }
        $counts = fn(): array => array_map(function (int $offset) use ($native, $base): int {
            if ($offset === 0) {
                $native->refresh();
            }
            $table = $native->u64($base + $offset);
            return $table === 0 ? 0 : ($native->readable($table, 32) ? $native->u32($table + self::COUNT) : -1);
        }, range(0, self::SCAN - 8, 8));
        $before = $counts();
        ini_set($setting, $entry['local_value'] === '13' ? '12' : '13');
        $during = $counts();
        ini_restore($setting);
        $after = $counts();
        $found = [];
        foreach ($before as $i => $count) {
            if ($count >= 0 && $during[$i] === $count + 1 && $after[$i] === $count) {
                $found[] = $i * 8;
            }
        }
        return \count($found) === 1 ? $found[0] : null;
    }
}
