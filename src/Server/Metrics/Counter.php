<?php

declare(strict_types=1);

namespace Kiln\Server\Metrics;

/** A value that only goes up (requests served, restarts); summed across the node's workers. */
final class Counter extends Metric
{
    public function type(): MetricType
    {
        return MetricType::Counter;
    }

    /** Adds $by (0 or more) to the series of these label values, in the order the labels were declared. */
    public function inc(float $by = 1.0, string ...$labelValues): void
    {
        if ($by < 0) {
            throw new \ValueError("Counter {$this->name} only goes up; use a gauge for a value that goes down");
        }
        $key = $this->key(array_values($labelValues));
        $current = $this->series[$key] ?? 0.0;
        \assert(\is_float($current));
        $this->series[$key] = $current + $by;
    }
}
