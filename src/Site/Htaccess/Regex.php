<?php

declare(strict_types=1);

namespace Kiln\Site\Htaccess;

/** Apache's regexes are PCRE: a pattern becomes a PHP one with a delimiter no pattern can end early. */
final class Regex
{
    /** @throws \InvalidArgumentException when the pattern does not compile */
    public static function compile(string $pattern, bool $noCase): string
    {
        $compiled = "\x01" . $pattern . "\x01" . ($noCase ? 'i' : '');
        $why = null;
        set_error_handler(static function (int $level, string $message) use (&$why): bool {
            // "preg_match(): Compilation failed: missing closing parenthesis at offset 3": PCRE's reason
            $why = (string) preg_replace('/^preg_match\(\): (Compilation failed: )?/', '', $message);
            return true;
        });
        try {
            $ok = preg_match($compiled, '');
        } finally {
            restore_error_handler();
        }
        if ($ok === false) {
            throw new \InvalidArgumentException("bad regular expression '$pattern': " . ($why ?? preg_last_error_msg()));
        }
        return $compiled;
    }
}
