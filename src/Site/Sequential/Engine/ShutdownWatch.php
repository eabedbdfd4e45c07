<?php

declare(strict_types=1);

namespace Kiln\Site\Sequential\Engine;

/**
 * Tells whether register_shutdown_function() was called, by reading the next free numeric key of
 * BG(user_shutdown_function_names), the first field of PHP's `basic_globals`: each call appends under a new
 * number. (session_register_shutdown() uses a string key and is not counted: the runner closes the session
 * itself.) A script that registered one expects it to run when its request ends, before the response
 * leaves; PHP offers no way to run or remove one early, so the runner ends such a request the way exit()
 * does (see SequentialRunner).
 *
 * find() registers one no-op shutdown function and checks that the key moved.
 *
 * @internal
 */
final class ShutdownWatch
{
    /** Offset of nNextFreeElement in a zend_array. */
    private const NEXT_FREE = 40;

    private static self|false|null $found = null;

    /** nNextFreeElement of the table once PHP created it (it lives as long as the process). */
    private ?\FFI\CData $nextFree = null;

    private function __construct(
        private readonly Native $native,
        private readonly int $slot,
    ) {}

    public static function find(): ?self
    {
        if (self::$found === null) {
            self::$found = false;
            $native = Native::get();
            if ($native !== null && \PHP_INT_SIZE === 8) {
                try {
                    $watch = new self($native, $native->symbol('basic_globals'));
                    $before = $watch->mark();
                    register_shutdown_function(static function (): void {});
                    $native->refresh();
                    $after = $watch->mark();
                    self::$found = $after !== null && $after !== $before && $watch->mark() === $after ? $watch : false;
                } catch (\Throwable) {
                    self::$found = false;
                }
            }
        }
        return self::$found === false ? null : self::$found;
    }

    /** A value that changes whenever a shutdown function is registered; null when the table is not where expected. */
    public function mark(): ?int
    {
        if ($this->nextFree === null) {
            $table = $this->native->u64($this->slot);
            if ($table === 0) {
                return 0;
            }
            if (!$this->native->readable($table, 48)) {
                return null;
            }
            $nextFree = $this->native->ffi->cast('int64_t*', $table + self::NEXT_FREE);
            \assert($nextFree instanceof \FFI\CData);
            $this->nextFree = $nextFree;
        }
        return Native::int($this->nextFree[0]);
    }
}
