<?php

declare(strict_types=1);

namespace Kiln\Site\Sequential\Engine;

/**
 * Forgets the session id between requests, the way the end of a request does it for a web SAPI: PS(id)
 * back to NULL. Only then does the next session_start() look at the visitor's cookie: after
 * session_id('') PHP makes a new session for everyone (a returning visitor loses theirs), and without a
 * reset at all the next visitor resumes the previous one's session.
 *
 * PS() (the session module's globals) is not exported; find() sets the id to a marker with session_id()
 * and looks for the one pointer to it in the PHP binary's data (first near the session module's exported
 * php_session_class_entry, where its globals sit), checks it follows a second marker, then checks that
 * NULL there makes session_id() return ''.
 *
 * @internal
 */
final class SessionId
{
    private static self|false|null $found = null;

    private function __construct(private \FFI\CData $slot) {}

    public static function find(): ?self
    {
        if (self::$found === null) {
            self::$found = false;
            $native = Native::get();
            if ($native !== null && \PHP_INT_SIZE === 8 && \extension_loaded('session')
                && session_status() === \PHP_SESSION_NONE && !headers_sent()) {
                try {
                    self::$found = self::probe($native) ?? false;
                } catch (\Throwable) {
                    self::$found = false;
                } finally {
                    if (self::$found === false) {
                        @session_id('');
                    }
                }
            }
        }
        return self::$found === false ? null : self::$found;
    }

    /** After the session was closed: the next session_start() reads the session cookie again. */
    public function forget(): void
    {
        if (session_status() === \PHP_SESSION_ACTIVE || (self::current() === '' && Native::int($this->slot[0]) === 0)) {
            return;
        }
        @session_id(''); // releases the id; PS(id) is now PHP's shared empty string, never freed
        $this->slot[0] = 0;
    }

    private static function probe(Native $native): ?self
    {
        $data = $native->binaryData();
        if ($data === null) {
            return null;
        }
        $first = 'kilnprobe' . bin2hex(random_bytes(8));
        if (@session_id($first) === false || self::current() !== $first) {
            return null;
        }
        $native->refresh();
        $near = self::nearSessionModule($native, $data);
        $found = $near === null ? [] : self::scan($native, $near, $first);
        if (\count($found) !== 1) {
            $found = self::scan($native, $data, $first);
        }
        if (\count($found) !== 1) {
            return null;
        }
        $slot = $native->words($found[0]);
        $second = 'kilnprobe' . bin2hex(random_bytes(8));
        @session_id($second);
        $native->refresh();
        if (!$native->isZendString(Native::int($slot[0]), $second)) {
            return null;
        }
        $id = new self($slot);
        $id->forget();
        return Native::int($slot[0]) === 0 && self::current() === '' ? $id : null;
    }

    /**
     * Addresses in [start, end) that hold a pointer to a zend_string equal to $id.
     *
     * @param array{int, int} $range
     * @return list<int>
     */
    private static function scan(Native $native, array $range, string $id): array
    {
        $words = $native->words($range[0]);
        $found = [];
        for ($i = 0, $n = intdiv($range[1] - $range[0], 8); $i < $n; $i++) {
            $value = Native::int($words[$i]);
            if ($value !== 0 && $value % 8 === 0 && $native->readable($value, 40) && $native->isZendString($value, $id)) {
                $found[] = $range[0] + $i * 8;
            }
        }
        return $found;
    }

    /**
     * 16 KiB of the binary's data around the session module's class entry, when PHP exports it.
     *
     * @param array{int, int} $data
     * @return array{int, int}|null
     */
    private static function nearSessionModule(Native $native, array $data): ?array
    {
        try {
            $entry = \FFI::cdef('extern char php_session_class_entry[];');
            $symbol = $entry->php_session_class_entry; // @phpstan-ignore property.notFound (FFI global)
            \assert($symbol instanceof \FFI\CData);
            $address = $native->addressOf(\FFI::addr($symbol));
        } catch (\Throwable) {
            return null;
        }
        $start = max($data[0], ($address - 8192) & ~7);
        $end = min($data[1], $address + 8192);
        return $start < $end ? [$start, $end] : null;
    }

    /**
     * session_id(), read anew each time.
     *
     * @phpstan-impure
     */
    private static function current(): string
    {
        return (string) session_id();
    }
}
