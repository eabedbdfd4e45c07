<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Parity;

/** Flattens two normalised answers into `path = value` lines and lists the lines that differ. */
final class ParityDiff
{
    /** @return array<string, string> path => JSON of the leaf value, in document order */
    public static function flatten(mixed $value, string $path = ''): array
    {
        if (\is_array($value) && $value !== []) {
            $out = [];
            foreach ($value as $key => $item) {
                $out += self::flatten($item, $path === '' ? (string) $key : "$path.$key");
            }
            return $out;
        }
        return [$path => (string) json_encode($value, JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE | JSON_INVALID_UTF8_SUBSTITUTE)];
    }

    /**
     * Human-readable differences, empty when the two are equal (order of paths included).
     *
     * @return list<string>
     */
    public static function differences(mixed $reference, mixed $subject, string $referenceName = 'reference', string $subjectName = 'subject'): array
    {
        $a = self::flatten($reference);
        $b = self::flatten($subject);
        $lines = [];
        $width = max(\strlen($referenceName), \strlen($subjectName));
        foreach (array_keys($a + $b) as $path) {
            $left = $a[$path] ?? '(absent)';
            $right = $b[$path] ?? '(absent)';
            if ($left !== $right) {
                $lines[] = "  $path\n    " . str_pad($referenceName, $width) . " : $left\n    " . str_pad($subjectName, $width) . " : $right";
            }
        }
        if ($lines === [] && array_keys($a) !== array_keys($b)) {
            $lines[] = "  same values in a different order:\n    $referenceName: " . implode(', ', array_keys($a))
                . "\n    $subjectName: " . implode(', ', array_keys($b));
        }
        return $lines;
    }
}
