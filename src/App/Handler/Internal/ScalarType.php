<?php

declare(strict_types=1);

namespace Kiln\App\Handler\Internal;

/**
 * The types a route parameter (always a string on the wire) can be coerced to.
 *
 * @internal
 */
enum ScalarType
{
    case Int;
    case Float;
    case Bool;
    case String;

    private const BOOLEANS = [
        '1' => true, 'true' => true, 'yes' => true, 'on' => true,
        '0' => false, 'false' => false, 'no' => false, 'off' => false,
    ];

    public static function fromName(string $builtin): ?self
    {
        return match ($builtin) {
            'int' => self::Int,
            'float' => self::Float,
            'bool' => self::Bool,
            'string', 'mixed' => self::String,
            default => null,
        };
    }

    /** The value as this type, or null when it does not fit (the caller answers 404). */
    public function coerce(string $value): int|float|bool|string|null
    {
        return match ($this) {
            self::String => $value,
            self::Int => self::toInt($value),
            self::Float => self::toFloat($value),
            self::Bool => self::BOOLEANS[strtolower($value)] ?? null,
        };
    }

    /** Digits with an optional leading '-'; leading zeros allowed; a value past PHP_INT_MAX/MIN does not fit. */
    private static function toInt(string $value): ?int
    {
        if (isset($value[0]) && !isset($value[18]) && ctype_digit($value)) {
            return (int) $value; // the common case: at most 18 digits always fit
        }
        $negative = $value !== '' && $value[0] === '-';
        $digits = $negative ? substr($value, 1) : $value;
        if ($digits === '' || !ctype_digit($digits)) {
            return null;
        }
        $digits = ltrim($digits, '0');
        if ($digits === '') {
            return 0;
        }
        $int = (int) ($negative ? '-' . $digits : $digits);
        // (int) saturates on overflow, so a value that does not survive the round trip did not fit
        return (string) $int === ($negative ? '-' . $digits : $digits) ? $int : null;
    }

    /** Decimal notation, optionally with an exponent; no whitespace, no INF/NAN, no hex. */
    private static function toFloat(string $value): ?float
    {
        if (preg_match('/^-?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?$/D', $value) !== 1) {
            return null;
        }
        $float = (float) $value;
        return is_finite($float) ? $float : null;
    }
}
