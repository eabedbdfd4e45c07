<?php

declare(strict_types=1);

namespace Kiln\Site\Sequential\Engine;

/**
 * The worker's command line, kept from the scripts' getopt().
 *
 * PHP's CLI SAPI puts `argv` and `argc` into the `$_SERVER` array PHP itself holds (PG(http_globals), in
 * `core_globals`), and getopt() reads them there whatever the script's `$_SERVER` is: a script on the sequential
 * or fork tier found the process's arguments (an empty list of options) where a web SAPI gives it false. Scripts
 * meant only for a shell test exactly that (`if (!is_array(getopt(…))) die;`), and ran over HTTP. hide() finds
 * that array (the fourth of the six `http_globals` zvals, chosen by their types and layout alone, then checked to
 * hold `argv`) and deletes both entries from it in place; the global `$_SERVER` shares it at boot, and loses them
 * too. getopt() then says false, which is the probe: when it does not, nothing is claimed.
 *
 * Not on a debug build of PHP, which asserts that an array changed in place has no other holder.
 *
 * @internal
 */
final class CommandLine
{
    private const IS_UNDEF = 0;
    private const IS_NULL = 1;
    private const IS_ARRAY = 7;
    /** A refcounted, collectable array zval's type_info (IS_ARRAY_EX). */
    private const IS_ARRAY_EX = 0x307;
    /** Where http_globals may lie in core_globals (bytes, from its start); 352 in PHP 8.2 on x86-64. */
    private const SCAN = 1024;
    /** TRACK_VARS_SERVER: the index of `$_SERVER` among the six. */
    private const SERVER = 3;
    /** sizeof(Bucket) and sizeof(zval) on 64-bit. */
    private const BUCKET = 32;
    private const ZVAL = 16;

    private static ?bool $hidden = null;

    /** Whether getopt() now returns false, as under a web SAPI, for a script without a global $argv. */
    public static function hide(): bool
    {
        return self::$hidden ??= self::find();
    }

    private static function find(): bool
    {
        $native = Native::get();
        if ($native === null || PHP_DEBUG === 1) {
            return false;
        }
        try {
            $base = $native->symbol('core_globals');
        } catch (\FFI\Exception) {
            return false;
        }
        $found = [];
        for ($offset = 0; $offset <= self::SCAN; $offset += 8) {
            if (!$native->readable($base + $offset, 6 * self::ZVAL)) {
                break;
            }
            $array = self::serverArray($native, $base + $offset);
            if ($array !== null) {
                $found[] = $array;
            }
        }
        $found = array_values(array_filter($found, static fn(int $array): bool => $native->ffi->zend_hash_str_find( // @phpstan-ignore method.notFound (FFI)
            $native->cast('HashTable *', $array),
            'argv',
            4,
        ) !== null));
        if (\count($found) !== 1) {
            return false;
        }
        $hash = $native->cast('HashTable *', $found[0]);
        $native->ffi->zend_hash_str_del($hash, 'argv', 4); // @phpstan-ignore method.notFound (FFI)
        $native->ffi->zend_hash_str_del($hash, 'argc', 4); // @phpstan-ignore method.notFound (FFI)
        // getopt() looks at the global $argv next, which the entry script may still hold (the tiers unset it for
        // the scripts they run): asked without it.
        $global = \array_key_exists('argv', $GLOBALS) ? $GLOBALS['argv'] : null;
        unset($GLOBALS['argv']);
        $hidden = getopt('') === false;
        if ($global !== null) {
            $GLOBALS['argv'] = $global;
        }
        return $hidden;
    }

    /**
     * The array at the SERVER place if six zvals that may be http_globals start at $address: each undefined, null
     * or an array, the SERVER one a refcounted array whose header and buckets lie in readable memory.
     */
    private static function serverArray(Native $native, int $address): ?int
    {
        for ($i = 0; $i < 6; $i++) {
            $type = $native->u32($address + $i * self::ZVAL + 8);
            if ($type !== self::IS_ARRAY_EX && $type !== self::IS_ARRAY && $type !== self::IS_NULL && $type !== self::IS_UNDEF) {
                return null;
            }
        }
        $zval = $address + self::SERVER * self::ZVAL;
        if ($native->u32($zval + 8) !== self::IS_ARRAY_EX) {
            return null;
        }
        $array = $native->u64($zval);
        // The header (zend_array: gc, flags, nTableMask, arData, nNumUsed, nNumOfElements, nTableSize, …): a
        // refcounted array, not an immutable or persistent one (GC_IMMUTABLE, GC_PERSISTENT), a hash (not packed).
        if (!$native->readable($array, 56) || ($native->u32($array + 4) & 0x0f) !== self::IS_ARRAY
            || ($native->u32($array + 4) & 0xc0) !== 0 || ($native->u32($array + 8) & 0x04) !== 0) {
            return null;
        }
        $mask = $native->u32($array + 12); // nTableMask: minus twice the table size, as a uint32
        $data = $native->u64($array + 16);
        $used = $native->u32($array + 24);
        $size = $native->u32($array + 32);
        $hash = (0x100000000 - $mask) * 4; // the hash slots before arData
        if ($size === 0 || $size > 1 << 20 || $used > $size || $mask === 0 || 0x100000000 - $mask !== 2 * $size
            || !$native->readable($data - $hash, $hash + $size * self::BUCKET)) {
            return null;
        }
        return $array;
    }
}
