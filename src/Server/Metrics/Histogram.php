<?php

declare(strict_types=1);

namespace Kiln\Server\Metrics;

/**
 * Observations counted in buckets (request durations); bucket counts, sums and counts are summed across
 * the node's workers. Buckets are upper bounds, ascending; `+Inf` is implied.
 */
final class Histogram extends Metric
{
    public const SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0];

    /**
     * @param list<string> $labels
     * @param list<float> $buckets
     */
    public function __construct(string $name, string $help, array $labels, public readonly array $buckets = self::SECONDS)
    {
        if ($buckets === [] || \in_array('le', $labels, true)) {
            throw new \ValueError("Histogram $name needs at least one bucket, and no label named le");
        }
        for ($i = 1, $n = \count($buckets); $i < $n; $i++) {
            if ($buckets[$i] <= $buckets[$i - 1]) {
                throw new \ValueError("Histogram $name: buckets must be ascending, got " . implode(', ', $buckets));
            }
        }
        parent::__construct($name, $help, $labels);
    }

    public function type(): MetricType
    {
        return MetricType::Histogram;
    }

    public function observe(float $value, string ...$labelValues): void
    {
        $key = $this->key(array_values($labelValues));
        $series = $this->series[$key] ?? [array_fill(0, \count($this->buckets), 0), 0.0, 0];
        \assert(\is_array($series));
        // Counts are per bucket (not cumulative) here; the text format makes them cumulative.
        $counts = $series[0];
        foreach ($this->buckets as $i => $bound) {
            if ($value <= $bound) {
                $counts[$i]++;
                break;
            }
        }
        $series[0] = array_values($counts);
        $series[1] += $value;
        $series[2]++;
        $this->series[$key] = $series;
    }

    public function export(): array
    {
        return ['buckets' => $this->buckets] + parent::export();
    }
}
