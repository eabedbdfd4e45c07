<?php

declare(strict_types=1);

namespace Kiln\Server\Metrics;

/**
 * A value that goes up and down (requests in flight, open connections). Across the node's workers the
 * values of one series are summed: a gauge whose sum means nothing (a worker's memory) carries a `worker` label.
 */
final class Gauge extends Metric
{
    public function type(): MetricType
    {
        return MetricType::Gauge;
    }

    public function set(float $value, string ...$labelValues): void
    {
        $this->series[$this->key(array_values($labelValues))] = $value;
    }

    public function add(float $by, string ...$labelValues): void
    {
        $key = $this->key(array_values($labelValues));
        $current = $this->series[$key] ?? 0.0;
        \assert(\is_float($current));
        $this->series[$key] = $current + $by;
    }
}
