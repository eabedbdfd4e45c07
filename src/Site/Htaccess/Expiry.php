<?php

declare(strict_types=1);

namespace Kiln\Site\Htaccess;

/** One mod_expires rule: `access plus 1 month 2 days`, `modification plus 1 hour`, or the short `A3600`/`M3600`. */
final class Expiry
{
    private const UNITS = ['year' => 31_536_000, 'month' => 2_592_000, 'week' => 604_800, 'day' => 86_400, 'hour' => 3600, 'minute' => 60, 'second' => 1];

    private function __construct(
        /** Counted from the file's modification time, not the request. */
        public readonly bool $fromModification,
        public readonly int $seconds,
    ) {}

    /** @throws \InvalidArgumentException */
    public static function parse(string $text): self
    {
        if (preg_match('/^([AM])(\d+)$/', $text, $m) === 1) {
            return new self($m[1] === 'M', (int) $m[2]);
        }
        $words = preg_split('/\s+/', strtolower(trim($text))) ?: [];
        $base = array_shift($words);
        if (!\in_array($base, ['access', 'now', 'modification'], true)) {
            throw new \InvalidArgumentException("expiry must start with access, now or modification, got '$text'");
        }
        if (($words[0] ?? '') === 'plus') {
            array_shift($words);
        }
        if ($words === [] || \count($words) % 2 !== 0) {
            throw new \InvalidArgumentException("expiry must be '<base> plus <number> <unit> …', got '$text'");
        }
        $seconds = 0;
        foreach (array_chunk($words, 2) as [$number, $unit]) {
            $unit = rtrim($unit, 's');
            if (!ctype_digit($number) || !isset(self::UNITS[$unit])) {
                throw new \InvalidArgumentException("expiry has a bad amount '$number $unit' in '$text'");
            }
            $seconds += (int) $number * self::UNITS[$unit];
        }
        return new self($base === 'modification', $seconds);
    }

    /** Unix time the response expires at; null when counted from a modification time there is none of. */
    public function at(int $now, ?int $modified): ?int
    {
        if ($this->fromModification) {
            return $modified === null ? null : $modified + $this->seconds;
        }
        return $now + $this->seconds;
    }
}
