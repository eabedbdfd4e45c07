<?php

declare(strict_types=1);

namespace Kiln\Server\Metrics;

/**
 * One process's metrics: each worker has one (Kiln's own series and the app's), and so has the supervisor.
 * Recording is plain array arithmetic in the process; once a second the worker sends export() to the
 * supervisor, which sums the workers' exports with merge() and serves them (docs/design/024-metrics.md).
 *
 * Adding a series is one call, from anywhere that holds the registry:
 * `$registry->counter('kiln_task_failures_total', 'Tasks that failed', ['reason'])->inc(1, 'timeout')`.
 * Asking again for a name returns the same metric; asking with another type or other labels is an \Error.
 */
final class Registry
{
    /** @var array<string, Metric> */
    private array $metrics = [];

    private static ?self $current = null;

    /** @var list<\Closure(): void> */
    private array $samplers = [];

    /** The registry of this worker, whose series reach /metrics; a detached one (recording for nobody) when metrics are off. */
    public static function current(): self
    {
        return self::$current ??= new self();
    }

    /** Made current by the worker after fork, before the app is built. */
    public function makeCurrent(): void
    {
        self::$current = $this;
    }

    /**
     * Runs $sample at each export(), before the values are read: for gauges cheaper to read when asked (queue
     * depth, open connections) than to keep up to date on every change.
     *
     * @param \Closure(): void $sample
     */
    public function sampler(\Closure $sample): void
    {
        $this->samplers[] = $sample;
    }

    /** @param list<string> $labels */
    public function counter(string $name, string $help, array $labels = []): Counter
    {
        $metric = $this->metrics[$name] ??= new Counter(self::checked($name, $labels), $help, $labels);
        return $metric instanceof Counter && $metric->labels === $labels ? $metric : throw self::clash($name);
    }

    /** @param list<string> $labels */
    public function gauge(string $name, string $help, array $labels = []): Gauge
    {
        $metric = $this->metrics[$name] ??= new Gauge(self::checked($name, $labels), $help, $labels);
        return $metric instanceof Gauge && $metric->labels === $labels ? $metric : throw self::clash($name);
    }

    /**
     * @param list<string> $labels
     * @param list<float> $buckets upper bounds in ascending order (seconds for durations)
     */
    public function histogram(string $name, string $help, array $labels = [], array $buckets = Histogram::SECONDS): Histogram
    {
        $metric = $this->metrics[$name] ??= new Histogram(self::checked($name, $labels), $help, $labels, $buckets);
        return $metric instanceof Histogram && $metric->labels === $labels && $metric->buckets === $buckets
            ? $metric : throw self::clash($name);
    }

    /** @return array<string, array{type: string, help: string, labels: list<string>, buckets: list<float>, series: array<string, float|array{list<int>, float, int}>}> */
    public function export(): array
    {
        foreach ($this->samplers as $sample) {
            $sample();
        }
        $export = [];
        foreach ($this->metrics as $name => $metric) {
            $export[$name] = $metric->export();
        }
        return $export;
    }

    /**
     * Sums exports of several processes: counters, gauges, and histograms' buckets, sums and counts, series by
     * series. A family two processes declared differently keeps the first declaration (the other's series are dropped).
     *
     * @param list<array<string, array{type: string, help: string, labels: list<string>, buckets: list<float>, series: array<string, float|array{list<int>, float, int}>}>> $exports
     * @return array<string, array{type: string, help: string, labels: list<string>, buckets: list<float>, series: array<string, float|array{list<int>, float, int}>}>
     */
    public static function merge(array $exports): array
    {
        $merged = [];
        foreach ($exports as $export) {
            foreach ($export as $name => $family) {
                if (!isset($merged[$name])) {
                    $merged[$name] = $family;
                    continue;
                }
                $into = $merged[$name];
                if ($into['type'] !== $family['type'] || $into['labels'] !== $family['labels'] || $into['buckets'] !== $family['buckets']) {
                    continue;
                }
                foreach ($family['series'] as $key => $value) {
                    $merged[$name]['series'][$key] = self::sum($into['series'][$key] ?? null, $value);
                }
            }
        }
        return $merged;
    }

    /**
     * @param float|array{list<int>, float, int}|null $a
     * @param float|array{list<int>, float, int} $b
     * @return float|array{list<int>, float, int}
     */
    private static function sum(float|array|null $a, float|array $b): float|array
    {
        if ($a === null) {
            return $b;
        }
        if (\is_float($a) && \is_float($b)) {
            return $a + $b;
        }
        if (\is_array($a) && \is_array($b)) {
            $buckets = $a[0];
            foreach ($b[0] as $i => $count) {
                $buckets[$i] = ($buckets[$i] ?? 0) + $count;
            }
            return [array_values($buckets), $a[1] + $b[1], $a[2] + $b[2]];
        }
        return $a;
    }

    /** @param list<string> $labels */
    private static function checked(string $name, array $labels): string
    {
        if (preg_match('/^[a-zA-Z_:][a-zA-Z0-9_:]*$/', $name) !== 1) {
            throw new \ValueError("'$name' is not a metric name: letters, digits, _ and :, not starting with a digit");
        }
        foreach ($labels as $label) {
            if (preg_match('/^[a-zA-Z_][a-zA-Z0-9_]*$/', $label) !== 1 || str_starts_with($label, '__')) {
                throw new \ValueError("'$label' is not a label name for $name: letters, digits and _, not starting with __");
            }
        }
        return $name;
    }

    private static function clash(string $name): \Error
    {
        return new \Error("Metric $name was declared already with another type, labels or buckets: use one declaration");
    }
}
