<?php

declare(strict_types=1);

namespace Kiln\Server\Metrics;

/** Renders a (merged) export in the Prometheus text exposition format 0.0.4. Sans-I/O: arrays in, text out. */
final class PrometheusText
{
    public const CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

    /** @param array<string, array{type: string, help: string, labels: list<string>, buckets: list<float>, series: array<string, float|array{list<int>, float, int}>}> $export */
    public static function render(array $export): string
    {
        ksort($export);
        $out = '';
        foreach ($export as $name => $family) {
            $out .= "# HELP $name " . str_replace(['\\', "\n"], ['\\\\', '\n'], $family['help']) . "\n# TYPE $name {$family['type']}\n";
            ksort($family['series'], SORT_STRING);
            foreach ($family['series'] as $key => $value) {
                $pairs = self::pairs($family['labels'], (string) $key);
                if (\is_array($value)) {
                    $out .= self::histogram($name, $pairs, $family['buckets'], $value);
                } else {
                    $out .= $name . self::labels($pairs) . ' ' . self::number($value) . "\n";
                }
            }
        }
        return $out;
    }

    /**
     * @param list<string> $pairs
     * @param list<float> $bounds
     * @param array{list<int>, float, int} $value
     */
    private static function histogram(string $name, array $pairs, array $bounds, array $value): string
    {
        $out = '';
        $cumulative = 0;
        foreach ($bounds as $i => $bound) {
            $cumulative += $value[0][$i] ?? 0;
            $out .= $name . '_bucket' . self::labels([...$pairs, 'le="' . self::number($bound) . '"']) . " $cumulative\n";
        }
        $out .= $name . '_bucket' . self::labels([...$pairs, 'le="+Inf"']) . " {$value[2]}\n";
        $out .= $name . '_sum' . self::labels($pairs) . ' ' . self::number($value[1]) . "\n";
        return $out . $name . '_count' . self::labels($pairs) . " {$value[2]}\n";
    }

    /**
     * @param list<string> $labels
     * @return list<string>
     */
    private static function pairs(array $labels, string $key): array
    {
        if ($labels === []) {
            return [];
        }
        $pairs = [];
        foreach (explode("\x1f", $key) as $i => $value) {
            $pairs[] = $labels[$i] . '="' . str_replace(['\\', '"', "\n"], ['\\\\', '\\"', '\n'], $value) . '"';
        }
        return $pairs;
    }

    /** @param list<string> $pairs */
    private static function labels(array $pairs): string
    {
        return $pairs === [] ? '' : '{' . implode(',', $pairs) . '}';
    }

    private static function number(float $value): string
    {
        if (is_nan($value)) {
            return 'NaN';
        }
        if (is_infinite($value)) {
            return $value > 0 ? '+Inf' : '-Inf';
        }
        return $value == floor($value) && abs($value) < 1e15 ? sprintf('%.0f', $value) : (string) $value;
    }
}
