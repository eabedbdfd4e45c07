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
        set_error_handler(static fn(): bool => true);
        try {
            $ok = preg_match($compiled, '');
        } finally {
            restore_error_handler();
        }
        if ($ok === false) {
            throw new \InvalidArgumentException("bad regular expression '$pattern': " . preg_last_error_msg());
        }
        return $compiled;
    }
}
