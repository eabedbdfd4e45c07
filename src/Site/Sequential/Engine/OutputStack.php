<?php

declare(strict_types=1);

namespace Kiln\Site\Sequential\Engine;

/**
 * PHP's stack of output buffers (OG(handlers)), for the one thing userland cannot do that the end of a web
 * request does: end a buffer that was started without PHP_OUTPUT_HANDLER_REMOVABLE. PHP itself flushes such
 * a buffer when the request ends (php_output_end_all() forces it); in a worker that serves on, ob_end_flush()
 * refuses it, so the script's page would stay in it and the buffer would outlive the request.
 * unlock() gives the buffers above a level the flags of an ordinary buffer, so they can be ended.
 * nameAsDefault() gives the buffer a tier captures a script's output with the name of the buffer PHP's
 * `output_buffering` opens under a web SAPI, so a script that asks which buffer it prints into (MediaWiki
 * sets its Content-Length only under "default output handler") finds what it finds under Apache or php-fpm.
 *
 * The layout read (zend_stack {int size, top, max; void **elements}, then php_output_handler {zend_string
 * *name; int flags; int level; …}) is checked against what PHP reports before anything is written: the
 * stack's depth against ob_get_level(), every buffer's name against ob_list_handlers() and its level
 * against its place. Any mismatch and nothing is changed.
 *
 * @internal
 */
final class OutputStack
{
    /** PHP_OUTPUT_HANDLER_CLEANABLE | FLUSHABLE | REMOVABLE (PHP_OUTPUT_HANDLER_STDFLAGS). */
    private const STANDARD = 0x0070;

    /** PHP_OUTPUT_HANDLER_DISABLED: PHP no longer calls the buffer's handler. */
    private const DISABLED = 0x2000;

    /** The name ob_start() gives a Closure's buffer, and the one PHP gives its `output_buffering` buffer. */
    private const CLOSURE = 'Closure::__invoke';

    private const DEFAULT = 'default output handler';

    /** GC_IMMUTABLE in a zend_string's type_info: an interned string, shared, never to be written. */
    private const IMMUTABLE = 0x40;

    private static self|false|null $instance = null;

    private function __construct(
        private readonly Native $native,
        private readonly int $base,
    ) {}

    /** Null without FFI, on a 32-bit build, or when PHP does not export its output globals. */
    public static function find(): ?self
    {
        if (self::$instance === null) {
            self::$instance = false;
            $native = Native::get();
            if ($native !== null && \PHP_INT_SIZE === 8) {
                try {
                    $base = $native->symbol('output_globals');
                    if ($native->readable($base, 24)) {
                        self::$instance = new self($native, $base);
                    }
                } catch (\Throwable) {
                    // not exported: nothing to unlock with
                }
            }
        }
        return self::$instance === false ? null : self::$instance;
    }

    /**
     * Makes every buffer above $level (1-based levels, as ob_get_level()) cleanable, flushable and
     * removable, and with $disable its handler no longer called (as PHP drops the buffers of a request that
     * failed). False when the stack does not look as PHP reports it (then nothing was changed).
     */
    public function unlock(int $level, bool $disable = false): bool
    {
        $native = $this->native;
        $native->refresh();
        $depth = ob_get_level();
        $names = ob_list_handlers();
        if ($native->u32($this->base) !== 8 || $native->u32($this->base + 4) !== $depth || \count($names) !== $depth) {
            return false;
        }
        $elements = $native->u64($this->base + 16);
        if (!$native->readable($elements, 8 * $depth)) {
            return false;
        }
        $flags = [];
        for ($index = max(0, $level); $index < $depth; $index++) {
            $handler = $native->u64($elements + 8 * $index);
            $name = $names[$index] ?? null;
            if (!\is_string($name) || !$native->readable($handler, 16) || !$native->isZendString($native->u64($handler), $name)
                || $native->u32($handler + 12) !== $index) {
                return false;
            }
            $flags[$handler + 8] = $native->u32($handler + 8);
        }
        foreach ($flags as $address => $value) {
            $native->cast('uint32_t*', $address)[0] = $value | self::STANDARD | ($disable ? self::DISABLED : 0);
        }
        return true;
    }

    /**
     * Renames the top buffer, a Closure's that the caller just started, to PHP's "default output handler"
     * (what ob_get_status() and ob_list_handlers() show), in place: zend_string_alloc() rounds the 42 bytes of
     * "Closure::__invoke" (24 of header, 17, a NUL) up to 48, which hold the 47 of the new name, so the string
     * stays the buffer's own and PHP frees it as ever. Nothing is written unless the stack looks as PHP reports
     * it and the name is a string of its own (refcount 1, not interned).
     */
    public function nameAsDefault(): bool
    {
        $depth = ob_get_level();
        if ($depth === 0 || (ob_list_handlers()[$depth - 1] ?? null) !== self::CLOSURE) {
            return false;
        }
        $native = $this->native;
        $native->refresh();
        if ($native->u32($this->base) !== 8 || $native->u32($this->base + 4) !== $depth) {
            return false;
        }
        $elements = $native->u64($this->base + 16);
        $handler = $native->readable($elements, 8 * $depth) ? $native->u64($elements + 8 * ($depth - 1)) : 0;
        if (!$native->readable($handler, 16) || $native->u32($handler + 12) !== $depth - 1) {
            return false;
        }
        $name = $native->u64($handler);
        if (!$native->isZendString($name, self::CLOSURE) || $native->u32($name) !== 1
            || ($native->u32($name + 4) & self::IMMUTABLE) !== 0) {
            return false;
        }
        $native->cast('uint64_t*', $name + 8)[0] = 0; // the hash, computed again when asked for
        $native->cast('uint64_t*', $name + 16)[0] = \strlen(self::DEFAULT);
        \FFI::memcpy($native->cast('char*', $name + 24), self::DEFAULT . "\0", \strlen(self::DEFAULT) + 1);
        return true;
    }
}
