<?php

declare(strict_types=1);

namespace Kiln\Redis\Resp;

/** Commands as RESP arrays of bulk strings, the only form a client sends. */
final class RespEncoder
{
    private function __construct() {}

    /** @param array<array-key, string|int|float> $args the command name first: ['SET', 'k', 'v'] */
    public static function command(array $args): string
    {
        if ($args === []) {
            throw new \ValueError('A Redis command needs at least its name');
        }
        $out = '*' . \count($args) . "\r\n";
        foreach ($args as $arg) {
            if (\is_float($arg)) {
                $arg = self::float($arg);
            }
            $arg = (string) $arg;
            $out .= '$' . \strlen($arg) . "\r\n" . $arg . "\r\n";
        }

        return $out;
    }

    private static function float(float $value): string
    {
        if (is_nan($value)) {
            throw new \ValueError('NaN cannot be sent to Redis');
        }
        if (is_infinite($value)) {
            return $value > 0 ? '+inf' : '-inf';
        }
        $text = var_export($value, true);

        return str_ends_with($text, '.0') ? substr($text, 0, -2) : $text;
    }
}
