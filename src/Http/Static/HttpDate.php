<?php

declare(strict_types=1);

namespace Kiln\Http\Static;

/**
 * HTTP-date (RFC 9110 §5.6.7): IMF-fixdate is sent; IMF-fixdate, the obsolete RFC 850 form and
 * asctime are read. Anything else (strtotime's free forms included) is not a date.
 */
final class HttpDate
{
    private const MONTHS = ['Jan' => 1, 'Feb' => 2, 'Mar' => 3, 'Apr' => 4, 'May' => 5, 'Jun' => 6,
        'Jul' => 7, 'Aug' => 8, 'Sep' => 9, 'Oct' => 10, 'Nov' => 11, 'Dec' => 12];

    private const FORMS = [
        // Sun, 06 Nov 1994 08:49:37 GMT
        '/^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), (?<d>\d\d) (?<m>[A-Z][a-z]{2}) (?<y>\d{4}) (?<h>\d\d):(?<i>\d\d):(?<s>\d\d) GMT$/D',
        // Sunday, 06-Nov-94 08:49:37 GMT
        '/^(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday), (?<d>\d\d)-(?<m>[A-Z][a-z]{2})-(?<y>\d\d) (?<h>\d\d):(?<i>\d\d):(?<s>\d\d) GMT$/D',
        // Sun Nov  6 08:49:37 1994
        '/^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) (?<m>[A-Z][a-z]{2}) (?<d>[ \d]\d) (?<h>\d\d):(?<i>\d\d):(?<s>\d\d) (?<y>\d{4})$/D',
    ];

    public static function format(int $timestamp): string
    {
        return gmdate('D, d M Y H:i:s', $timestamp) . ' GMT';
    }

    /** The Unix time of an HTTP-date, or null when the value is not one. */
    public static function parse(string $value): ?int
    {
        $value = trim($value, " \t");
        foreach (self::FORMS as $form) {
            if (preg_match($form, $value, $m) !== 1) {
                continue;
            }
            $month = self::MONTHS[$m['m']] ?? null;
            $year = (int) $m['y'];
            if (\strlen($m['y']) === 2) {
                // RFC 9110: a two-digit year more than 50 years in the future is in the past century.
                $year += $year + 2000 > (int) gmdate('Y') + 50 ? 1900 : 2000;
            }
            $day = (int) trim($m['d']);
            [$hour, $minute, $second] = [(int) $m['h'], (int) $m['i'], (int) $m['s']];
            if ($month === null || !checkdate($month, $day, $year) || $hour > 23 || $minute > 59 || $second > 60) {
                return null;
            }
            $time = gmmktime($hour, $minute, min($second, 59), $month, $day, $year);
            return $time === false ? null : $time;
        }
        return null;
    }
}
