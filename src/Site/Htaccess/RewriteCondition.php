<?php

declare(strict_types=1);

namespace Kiln\Site\Htaccess;

/** One `RewriteCond TestString CondPattern [NC,OR,NV]`, checked. */
final class RewriteCondition
{
    /** File tests Kiln answers (`-F` and `-U` would be subrequests: taken as `-f`/never). */
    public const FILE_TESTS = ['-f', '-F', '-d', '-s', '-l', '-L', '-h', '-x', '-e'];

    public const COMPARISONS = ['=', '<', '>', '<=', '>=', '-eq', '-ne', '-lt', '-le', '-gt', '-ge', '-ipmatch', '-strmatch'];

    public function __construct(
        public readonly string $testString,
        /** 'regex', a FILE_TESTS entry or a COMPARISONS entry. */
        public readonly string $operator,
        /** The compiled regex, or the right-hand side of a comparison. */
        public readonly string $operand,
        public readonly bool $negate,
        public readonly bool $noCase,
        public readonly bool $orNext,
    ) {}

    /**
     * @throws \InvalidArgumentException on a pattern Kiln cannot use
     * @param list<string> $flags upper-case
     */
    public static function create(string $testString, string $pattern, array $flags): self
    {
        $negate = str_starts_with($pattern, '!');
        if ($negate) {
            $pattern = substr($pattern, 1);
        }
        $noCase = \in_array('NC', $flags, true) || \in_array('NOCASE', $flags, true);
        $orNext = \in_array('OR', $flags, true) || \in_array('ORNEXT', $flags, true);
        foreach ($flags as $flag) {
            if (!\in_array($flag, ['NC', 'NOCASE', 'OR', 'ORNEXT', 'NV', 'NOVARY'], true)) {
                throw new \InvalidArgumentException("unknown RewriteCond flag '$flag'");
            }
        }
        if (\in_array($pattern, self::FILE_TESTS, true) || $pattern === '-U') {
            return new self($testString, $pattern, '', $negate, $noCase, $orNext);
        }
        foreach (['<=', '>=', '=', '<', '>'] as $op) {
            if (str_starts_with($pattern, $op)) {
                return new self($testString, $op, substr($pattern, \strlen($op)), $negate, $noCase, $orNext);
            }
        }
        if ($testString === 'expr') {
            throw new \InvalidArgumentException('expression conditions (expr) are not supported');
        }
        if (preg_match('/^(-(?:eq|ne|lt|le|gt|ge|ipmatch|strmatch))\s*(.+)$/s', $pattern, $m) === 1) {
            return new self($testString, $m[1], $m[2], $negate, $noCase, $orNext);
        }
        if (preg_match('/^-[a-zA-Z]+$/', $pattern) === 1) {
            throw new \InvalidArgumentException("'$pattern' needs a value, or is not a test Kiln knows");
        }
        return new self($testString, 'regex', Regex::compile($pattern, $noCase), $negate, $noCase, $orNext);
    }
}
