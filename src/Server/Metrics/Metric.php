<?php

declare(strict_types=1);

namespace Kiln\Server\Metrics;

/**
 * What every family of series shares: its name, help text and label names, and the series recorded so
 * far, keyed by their label values joined with "\x1f" (one array write per update, no object per series).
 */
abstract class Metric
{
    /** @var array<string, float|array{list<int>, float, int}> series by joined label values */
    protected array $series = [];

    /** @param list<string> $labels */
    public function __construct(
        public readonly string $name,
        public readonly string $help,
        public readonly array $labels,
    ) {}

    abstract public function type(): MetricType;

    /**
     * A plain-array copy (what a worker sends to the supervisor).
     *
     * @return array{type: string, help: string, labels: list<string>, buckets: list<float>, series: array<string, float|array{list<int>, float, int}>}
     */
    public function export(): array
    {
        return ['type' => $this->type()->value, 'help' => $this->help, 'labels' => $this->labels, 'buckets' => [], 'series' => $this->series];
    }

    /** @param list<string> $values */
    protected function key(array $values): string
    {
        if (\count($values) !== \count($this->labels)) {
            throw new \ValueError("Metric {$this->name} takes " . \count($this->labels) . ' label value(s) ('
                . implode(', ', $this->labels) . '), got ' . \count($values));
        }
        return implode("\x1f", $values);
    }
}
