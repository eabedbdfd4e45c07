<?php

declare(strict_types=1);

namespace Kiln\Site\Sequential\Engine;

/**
 * Whether a script may have called chdir(), without asking the kernel (getcwd() is a system call, after
 * every script). PHP's chdir() drops the stat cache entry of a relative path (BG(CurrentStatFile)), since
 * that path now means another file. So before the script, arm() puts a relative path of its own in that
 * cache (a stat of `./././…/.`, answered from the cache after the first time); after it, untouched() reads
 * the field: still that very string, and the script did not call chdir(). Anything else (a chdir(), a stat
 * of another file, clearstatcache()) and the caller looks with getcwd(), as before.
 *
 * The marker is a constant: PHP keeps the very string it was given (a copy of the pointer), so the field
 * holds its address. A script that called chdir() and then stat'ed that exact marker would go unseen; no
 * code has a reason to name it.
 *
 * find() looks for the field in PHP's basic globals: the word that goes from 0 to the marker's address when
 * the marker is stat'ed after clearstatcache(), and back to 0 when chdir() runs; the lstat() entry
 * (BG(CurrentLStatFile)) follows it. Null when it is not found (the caller then calls getcwd() after every
 * script, and clearstatcache()).
 *
 * alone() lets the caller keep the cache between requests when it holds the marker only: every request
 * starts with nothing of an earlier one's in it, as under php-fpm, at no system call.
 *
 * @internal
 */
final class CwdWatch
{
    /** The current directory, spelled as no script spells it. */
    public const MARKER = './././././././././././.';

    /** How many bytes of basic_globals are searched. */
    private const SCAN = 4096;

    private function __construct(
        private readonly \FFI\CData $slot,
        private readonly int $marker,
    ) {}

    public static function find(): ?self
    {
        try {
            $globals = Native::basicGlobals(self::SCAN);
            return $globals === null ? null : self::probe(...$globals);
        } catch (\Throwable) {
            return null;
        } finally {
            clearstatcache();
        }
    }

    /** The word of basic_globals that holds the marker once it is stat'ed, checked against chdir(). */
    private static function probe(Native $native, int $base): ?self
    {
        $words = $native->words($base);
        clearstatcache();
        $before = self::read($words);
        if (!self::mark()) {
            return null;
        }
        $after = self::read($words);
        $found = [];
        foreach ($after as $i => $value) {
            if ($before[$i] === 0 && $value !== 0 && $native->isZendString($value, self::MARKER)) {
                $found[] = $i;
            }
        }
        if (\count($found) !== 1) {
            return null;
        }
        [$slot, $marker] = [$native->cast('uint64_t*', $base + $found[0] * 8), $after[$found[0]]];
        // The next word is the lstat() entry: an lstat of the marker fills it, clearstatcache() empties both.
        if (self::at($slot, 1) !== 0 || is_link(self::MARKER) || self::at($slot, 1) !== $marker) {
            return null; // is_link(): an lstat, which fills the next word (the marker is a directory, not a link)
        }
        clearstatcache();
        if (self::at($slot, 0) !== 0 || self::at($slot, 1) !== 0) {
            return null;
        }
        // chdir() must clear the stat entry, and a second stat of the marker must leave the same string there.
        $cwd = getcwd();
        if ($cwd === false || !self::mark() || !@chdir($cwd) || self::at($slot, 0) !== 0 || !self::mark()) {
            return null;
        }
        return self::at($slot, 0) === $marker && self::at($slot, 1) === 0 ? new self($slot, $marker) : null;
    }

    /**
     * Word $i of $slot, read anew at each call (memory PHP itself changes).
     *
     * @phpstan-impure
     */
    private static function at(\FFI\CData $slot, int $i): int
    {
        return Native::int($slot[$i]);
    }

    /**
     * Before a script: the marker in the stat cache (a system call only when something replaced it). False
     * when the current directory is gone (untouched() then says false too).
     *
     * @phpstan-impure
     */
    public function arm(): bool
    {
        return self::mark();
    }

    /**
     * A stat of the marker: it is then PHP's last stat cache entry.
     *
     * @phpstan-impure
     */
    private static function mark(): bool
    {
        return is_dir(self::MARKER);
    }

    /**
     * After a script: true when the marker is still there, so the script did not call chdir().
     */
    public function untouched(): bool
    {
        return $this->slot[0] === $this->marker;
    }

    /** Whether the stat cache holds the marker and nothing else (BG(CurrentLStatFile), the next word, is empty). */
    public function alone(): bool
    {
        return $this->slot[0] === $this->marker && $this->slot[1] === 0;
    }

    /** @return list<int> */
    private static function read(\FFI\CData $words): array
    {
        $values = [];
        for ($i = 0; $i < self::SCAN / 8; $i++) {
            $values[] = Native::int($words[$i]);
        }
        return $values;
    }
}
