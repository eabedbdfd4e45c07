<?php

declare(strict_types=1);

namespace Kiln\Server\Metrics;

/** The kinds of series Kiln exports, named as in the Prometheus text format's `# TYPE` line. */
enum MetricType: string
{
    case Counter = 'counter';
    case Gauge = 'gauge';
    case Histogram = 'histogram';
}
