<?php

declare(strict_types=1);

namespace Kiln\Site\Sequential\Engine;

/**
 * Raw access, through FFI, to the PHP binary's own globals and a few of its exported functions: what the
 * sequential tier needs where the CLI SAPI lacks a per-request feature of a web SAPI. Every use of it is
 * found by a probe that checks what it reads against what PHP reports (and is abandoned, with a documented
 * fallback, when they disagree); a pointer is dereferenced only after checking that it lies in a readable
 * mapping of this process (/proc/self/maps), so a wrong guess reads nothing it should not.
 *
 * @internal
 */
final class Native
{
    private const CDEF = <<<'C'
        typedef struct _HashTable HashTable;
        typedef struct _php_stream php_stream;
        typedef struct { void *ptr; uint32_t type_info; uint32_t extra; } kiln_zval;
        typedef struct { uint32_t refcount; uint32_t type_info; uint64_t h; size_t len; char val[8]; } kiln_zend_string;
        HashTable *_zend_new_array(uint32_t size);
        void *zend_hash_str_update(HashTable *ht, const char *str, size_t len, kiln_zval *data);
        int zend_hash_str_del(HashTable *ht, const char *str, size_t len);
        void *zend_hash_str_find(const HashTable *ht, const char *str, size_t len);
        void zend_hash_clean(HashTable *ht);
        void zend_ini_deactivate(void);
        ssize_t _php_stream_write(php_stream *stream, const char *buf, size_t count);
        int _php_stream_truncate_set_size(php_stream *stream, size_t newsize);
        int _php_stream_seek(php_stream *stream, int64_t offset, int whence);
        int _php_stream_free(php_stream *stream, int close_options);
        C;

    private static self|false|null $instance = null;

    /** @var list<array{int, int}> readable address ranges [start, end) */
    private array $ranges = [];

    /** PHP may have mapped memory since the ranges were read: read them again on the next miss. */
    private bool $stale = true;

    /** @var array<string, \FFI\CType> types parsed once: a cast by name parses the name every time */
    private array $types = [];

    /** @var array<string, \FFI> one declaration per global, so a global the build lacks fails only its own user */
    private array $globals = [];

    /** zend_error_noreturn() alone, declared on first use: a build without it fails only fatalError() */
    private ?\FFI $errors = null;

    private function __construct(public readonly \FFI $ffi) {}

    /** Null when FFI is off, or the binary does not export the functions declared here (a static or stripped build). */
    public static function get(): ?self
    {
        if (self::$instance === null) {
            try {
                self::$instance = \extension_loaded('ffi') ? new self(\FFI::cdef(self::CDEF)) : false;
            } catch (\Throwable) {
                self::$instance = false;
            }
        }
        return self::$instance === false ? null : self::$instance;
    }

    /**
     * This process's FFI view and the address of PHP's basic globals (BG()), when $length bytes there can be
     * read on a 64-bit build; null otherwise.
     *
     * @return array{self, int}|null
     */
    public static function basicGlobals(int $length): ?array
    {
        $native = self::get();
        if ($native === null || \PHP_INT_SIZE !== 8) {
            return null;
        }
        $base = $native->symbol('basic_globals');
        return $native->readable($base, $length) ? [$native, $base] : null;
    }

    /**
     * Address of an exported global (`sapi_globals`, `executor_globals`, `basic_globals`, `output_globals`).
     *
     * @throws \FFI\Exception when the binary does not export it
     */
    public function symbol(string $name): int
    {
        if (preg_match('/^[a-z_]+$/D', $name) !== 1) {
            throw new \Error("not a C global's name: $name");
        }
        $array = ($this->globals[$name] ??= \FFI::cdef("extern char {$name}[];"))->{$name};
        \assert($array instanceof \FFI\CData);
        // Read, a char element is a PHP string; passed by reference, FFI::addr() gets the CData behind it.
        return $this->addressOf(\FFI::addr($array[0])); // @phpstan-ignore argument.type
    }

    /**
     * Ends the request with a fatal error (E_ERROR), as PHP's own max_execution_time does: a bailout straight to
     * the end of the request, where the shutdown functions run, with no unwinding of the frames in between.
     *
     * @throws \FFI\Exception when the binary does not export zend_error_noreturn() (then nothing happened)
     */
    public function fatalError(string $message): never
    {
        $error = $this->errors ??= \FFI::cdef('void zend_error_noreturn(int type, const char *format, ...);');
        $error->zend_error_noreturn(\E_ERROR, '%s', $message); // @phpstan-ignore method.notFound (FFI function)
        throw new \Error('zend_error_noreturn() returned'); // not reached: it does not return
    }

    /** A CData of $type (`uint64_t*`, `char*`…) pointing at $address, or $address as a uintptr_t. */
    public function cast(string $type, int|\FFI\CData $address): \FFI\CData
    {
        $ctype = $this->types[$type] ??= $this->ffi->type($type) ?? throw new \Error("FFI does not know the type $type");
        return $this->ffi->cast($ctype, $address) ?? throw new \Error("FFI cannot cast to $type");
    }

    public function addressOf(\FFI\CData $pointer): int
    {
        return self::int($this->cast('uintptr_t', $pointer)->cdata); // @phpstan-ignore property.notFound (FFI scalar)
    }

    /** A pointer to 64-bit words at $address, for reads and writes in place. */
    public function words(int $address): \FFI\CData
    {
        return $this->cast('uint64_t*', $address);
    }

    public function u64(int $address): int
    {
        return self::int($this->words($address)[0]);
    }

    public function i64(int $address): int
    {
        return self::int($this->cast('int64_t*', $address)[0]);
    }

    public function u32(int $address): int
    {
        return self::int($this->cast('uint32_t*', $address)[0]);
    }

    /** The NUL-terminated string at $address, if it is readable and exactly $expected. */
    public function isString(int $address, string $expected): bool
    {
        $length = \strlen($expected) + 1;
        if (!$this->readable($address, $length)) {
            return false;
        }
        return \FFI::string($this->cast('char*', $address), $length) === $expected . "\0";
    }

    /** A zend_string (refcount, type, hash, length, bytes) at $address holding exactly $expected. */
    public function isZendString(int $address, string $expected): bool
    {
        return $address !== 0 && $this->readable($address, 24) && $this->u64($address + 16) === \strlen($expected)
            && $this->isString($address + 24, $expected);
    }

    /**
     * Whether [$address, $address + $length) lies in one readable mapping of this process. The mappings are
     * read again (/proc/self/maps, ~1 ms) on the first miss after refresh() (call it after PHP may have
     * mapped memory).
     */
    public function readable(int $address, int $length): bool
    {
        if ($address <= 0) {
            return false;
        }
        if ($this->within($address, $length)) {
            return true;
        }
        if (!$this->stale) {
            return false;
        }
        $this->ranges = self::mappings();
        $this->stale = false;
        return $this->within($address, $length);
    }

    /** Marks the mappings read as possibly out of date. */
    public function refresh(): void
    {
        $this->stale = true;
    }

    private function within(int $address, int $length): bool
    {
        [$low, $high] = [0, \count($this->ranges) - 1];
        while ($low <= $high) { // ranges are sorted and disjoint: binary search
            $middle = ($low + $high) >> 1;
            [$start, $end] = $this->ranges[$middle];
            if ($address < $start) {
                $high = $middle - 1;
            } elseif ($address >= $end) {
                $low = $middle + 1;
            } else {
                return $address + $length <= $end;
            }
        }
        return false;
    }

    /**
     * The writable data of the PHP binary itself (.data and .bss): where the globals of PHP's own modules
     * live, the static ones (a module's globals are not always exported) included.
     *
     * @return array{int, int}|null [start, end)
     */
    public function binaryData(): ?array
    {
        $binary = realpath(\PHP_BINARY);
        $range = null;
        foreach (@file('/proc/self/maps') ?: [] as $line) {
            if (preg_match('/^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \d+\s*(.*)$/', rtrim($line), $m) !== 1) {
                continue;
            }
            [$start, $end] = [(int) hexdec($m[1]), (int) hexdec($m[2])];
            if ($range === null) {
                if ($m[4] === $binary && str_starts_with($m[3], 'rw')) {
                    $range = [$start, $end];
                }
            } elseif ($start === $range[1] && $m[4] === '' && str_starts_with($m[3], 'rw')) {
                return [$range[0], $end]; // the .bss right after the file-backed .data
            } else {
                return $range;
            }
        }
        return $range;
    }

    /** @return list<array{int, int}> sorted */
    private static function mappings(): array
    {
        $ranges = [];
        foreach (@file('/proc/self/maps') ?: [] as $line) {
            // Kernel addresses (vsyscall) do not fit a PHP int and are never wanted.
            if (preg_match('/^([0-7]?[0-9a-f]{1,15})-([0-7]?[0-9a-f]{1,15}) r/', $line, $m) === 1) {
                $ranges[] = [(int) hexdec($m[1]), (int) hexdec($m[2])];
            }
        }
        sort($ranges);
        return $ranges;
    }

    public static function int(mixed $value): int
    {
        return \is_int($value) ? $value : 0;
    }
}
