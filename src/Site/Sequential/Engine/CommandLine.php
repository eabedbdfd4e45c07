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
 * that array (the fourth of the six `http_globals` zvals: the only one of them holding `argv`) and deletes both
 * entries from it in place. getopt() then says false, which is the probe: when it does not, nothing is claimed.
 *
 * @internal
 */
final class CommandLine
{
    private const IS_UNDEF = 0;
    private const IS_NULL = 1;
    private const IS_ARRAY = 7;
    /** Where http_globals may lie in core_globals (bytes, from its start); 352 in PHP 8.2 on x86-64. */
    private const SCAN = 1024;
    /** TRACK_VARS_SERVER: the index of `$_SERVER` among the six. */
    private const SERVER = 3;

    /** Whether getopt() now returns false, as under a web SAPI, for a script without a global $argv. */
    public static function hide(): bool
    {
        $native = Native::get();
        if ($native === null) {
            return false;
        }
        try {
            $base = $native->symbol('core_globals');
        } catch (\FFI\Exception) {
            return false;
        }
        $found = [];
        for ($offset = 0; $offset <= self::SCAN; $offset += 8) {
            if (!$native->readable($base + $offset, 6 * 16)) {
                break;
            }
            $array = self::serverArray($native, $base + $offset);
            if ($array !== null) {
                $found[] = $array;
            }
        }
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

    /** The array at the SERVER place if six zvals that may be http_globals start at $address and it holds `argv`. */
    private static function serverArray(Native $native, int $address): ?int
    {
        for ($i = 0; $i < 6; $i++) {
            $type = $native->u32($address + $i * 16 + 8) & 0xff;
            if ($type !== self::IS_ARRAY && $type !== self::IS_NULL && $type !== self::IS_UNDEF) {
                return null;
            }
        }
        $zval = $address + self::SERVER * 16;
        if (($native->u32($zval + 8) & 0xff) !== self::IS_ARRAY) {
            return null;
        }
        $array = $native->u64($zval);
        // A refcounted array of its own, not an immutable or persistent one (GC_IMMUTABLE, GC_PERSISTENT).
        if (!$native->readable($array, 56) || ($native->u32($array + 4) & 0x0f) !== self::IS_ARRAY
            || ($native->u32($array + 4) & 0xc0) !== 0) {
            return null;
        }
        return $native->ffi->zend_hash_str_find($native->cast('HashTable *', $array), 'argv', 4) === null ? null : $array; // @phpstan-ignore method.notFound (FFI)
    }
}
