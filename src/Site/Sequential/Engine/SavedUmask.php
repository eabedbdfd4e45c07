<?php

declare(strict_types=1);

namespace Kiln\Site\Sequential\Engine;

/**
 * Whether umask() was called since the last clear(), read from BG(umask) as a web SAPI's end of request
 * reads it: PHP's umask() stores the mask it found there on its first call (the field is -1 until then),
 * and the request's shutdown puts that mask back. RequestState does the same after each script, so a
 * request that left the mask alone costs one read instead of the two system calls of a umask() call.
 *
 * BG(umask) is the int just before BG(unserialize_max_depth) in PHP's basic globals (7.4 to 8.x). find()
 * sets that ini setting to two unlikely values to find it, checks that the int before it is -1 or the
 * current mask, then that umask() stores the mask there; otherwise it puts back what it changed and
 * returns null (RequestState then calls umask() after every script).
 *
 * @internal
 */
final class SavedUmask
{
    /** How many bytes of basic_globals are searched. */
    private const SCAN = 8192;

    /** Values of unserialize_max_depth no configuration uses. */
    private const PROBES = [40_961, 40_973];

    /** BG(umask) and the padding after it, as int32_t (written in place: not readonly). */
    private function __construct(private \FFI\CData $slot) {}

    public static function find(): ?self
    {
        try {
            $globals = Native::basicGlobals(self::SCAN);
            if ($globals === null) {
                return null;
            }
            [$native, $base] = $globals;
            $index = self::depthIndex($native->words($base));
            if ($index === null) {
                return null;
            }
            $slot = $native->cast('int32_t*', $base + ($index - 1) * 8);
            return self::check($slot) ? new self($slot) : null;
        } catch (\Throwable) {
            return null;
        }
    }

    /** Whether a script (or anything) called umask() since clear(). */
    public function changed(): bool
    {
        return $this->slot[0] !== -1;
    }

    /** As at the start of a request: umask() not called yet. */
    public function clear(): void
    {
        $this->slot[0] = -1;
    }

    /** The word index of BG(unserialize_max_depth), found by the values it takes; null unless exactly one. */
    private static function depthIndex(\FFI\CData $words): ?int
    {
        $saved = ini_get('unserialize_max_depth');
        if ($saved === false) {
            return null;
        }
        $found = null;
        try {
            foreach (self::PROBES as $probe) {
                if (ini_set('unserialize_max_depth', (string) $probe) === false) {
                    return null;
                }
                $at = [];
                for ($i = 1; $i < self::SCAN / 8; $i++) {
                    if ($words[$i] === $probe) {
                        $at[] = $i;
                    }
                }
                $found = $found === null ? $at : array_values(array_intersect($found, $at));
            }
        } finally {
            ini_set('unserialize_max_depth', $saved);
        }
        return \count($found) === 1 ? $found[0] : null;
    }

    /** The int holds -1 or the mask, its padding is 0, and umask() stores the mask there. */
    private static function check(\FFI\CData $slot): bool
    {
        $mask = umask();
        [$value, $padding] = [$slot[0], $slot[1]];
        if ($padding !== 0 || ($value !== -1 && $value !== $mask)) {
            return false;
        }
        $slot[0] = -1;
        umask($mask);
        if ($slot[0] === $mask) {
            return true;
        }
        $slot[0] = $value;
        return false;
    }
}
