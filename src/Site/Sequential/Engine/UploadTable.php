<?php

declare(strict_types=1);

namespace Kiln\Site\Sequential\Engine;

/**
 * Makes is_uploaded_file() and move_uploaded_file() accept the files of the current request. Both look the
 * path up in SG(rfc1867_uploaded_files), a table a web SAPI fills while it parses a multipart body and the
 * CLI never creates. This creates it (an ordinary engine hash table), adds each upload's temporary path
 * for the duration of the request, and empties it afterwards, so a path from an earlier request is refused.
 *
 * Each entry's value is a pointer to one persistent, empty zend_string, the shape PHP's own entries have:
 * if the process ends with entries left (exit() mid-request), PHP's shutdown unlinks "" for each (a no-op)
 * and frees the table.
 *
 * probe() checks it end to end (a temporary file is refused, registered, accepted, cleared, refused);
 * when it fails the functions stay as the CLI has them (always false) and the reason is logged.
 *
 * @internal
 */
final class UploadTable
{
    private const IS_PTR = 13;

    private int $count = 0;

    private function __construct(
        private readonly Native $native,
        private readonly \FFI\CData $table,
        private readonly \FFI\CData $value,
    ) {}

    public static function probe(?SapiGlobals $sapi): ?self
    {
        if ($sapi === null) {
            return null;
        }
        $native = $sapi->native;
        $slot = $native->words($sapi->uploadedFiles());
        $existing = Native::int($slot[0]);
        $ffi = $native->ffi;
        try {
            if ($existing === 0) {
                $table = $ffi->_zend_new_array(0); // @phpstan-ignore method.notFound (FFI)
                \assert($table instanceof \FFI\CData);
                $slot[0] = $native->addressOf($table);
            } else {
                $table = $ffi->cast('HashTable*', $existing);
                \assert($table instanceof \FFI\CData);
            }
            // One empty zend_string for every entry: never freed, never changed.
            $empty = $ffi->new('kiln_zend_string', false, true);
            \assert($empty instanceof \FFI\CData);
            $empty->refcount = 1; // @phpstan-ignore property.notFound (FFI struct)
            $empty->type_info = 6 | (1 << 6) | (1 << 7); // @phpstan-ignore property.notFound (IS_STRING, GC_IMMUTABLE, GC_PERSISTENT)
            $empty->len = 0; // @phpstan-ignore property.notFound
            $value = $ffi->new('kiln_zval', false, true);
            \assert($value instanceof \FFI\CData);
            $value->ptr = \FFI::addr($empty); // @phpstan-ignore property.notFound (FFI struct)
            $value->type_info = self::IS_PTR; // @phpstan-ignore property.notFound
            $uploads = new self($native, $table, $value);
            return $uploads->selfTest() ? $uploads : null;
        } catch (\Throwable) {
            return null;
        }
    }

    /** Lets is_uploaded_file() and move_uploaded_file() accept $path until clear(). */
    public function add(string $path): void
    {
        $this->native->ffi->zend_hash_str_update($this->table, $path, \strlen($path), \FFI::addr($this->value)); // @phpstan-ignore method.notFound
        $this->count++;
    }

    /** Forgets every path added (cheap when none was). */
    public function clear(): void
    {
        if ($this->count > 0) {
            $this->native->ffi->zend_hash_clean($this->table); // @phpstan-ignore method.notFound
            $this->count = 0;
        }
    }

    private function selfTest(): bool
    {
        $path = tempnam(sys_get_temp_dir(), 'kiln-upload-probe-');
        if ($path === false) {
            return false;
        }
        try {
            $before = is_uploaded_file($path);
            $this->add($path);
            $during = is_uploaded_file($path) && !is_uploaded_file($path . '-other');
            $this->clear();
            return !$before && $during && !is_uploaded_file($path);
        } finally {
            $this->clear();
            @unlink($path);
        }
    }
}
