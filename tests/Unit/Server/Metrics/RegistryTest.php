<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Server\Metrics;

use Kiln\Server\Metrics\PrometheusText;
use Kiln\Server\Metrics\Registry;
use PHPUnit\Framework\TestCase;

final class RegistryTest extends TestCase
{
    public function testCountersOfTwoWorkersAreSummedSeriesBySeries(): void
    {
        $a = new Registry();
        $b = new Registry();
        $a->counter('orders_total', 'Orders', ['kind'])->inc(2, 'book');
        $b->counter('orders_total', 'Orders', ['kind'])->inc(3, 'book');
        $b->counter('orders_total', 'Orders', ['kind'])->inc(1, 'pen');
        $text = PrometheusText::render(Registry::merge([self::wire($a), self::wire($b)]));
        self::assertSame("# HELP orders_total Orders\n# TYPE orders_total counter\n"
            . "orders_total{kind=\"book\"} 5\norders_total{kind=\"pen\"} 1\n", $text);
    }

    public function testHistogramBucketsAreCumulativeAndMergedExactly(): void
    {
        $a = new Registry();
        $b = new Registry();
        foreach ([0.001, 0.2, 7.0] as $value) {
            $a->histogram('d_seconds', 'D', ['tier'], [0.01, 1.0])->observe($value, 'app');
        }
        $b->histogram('d_seconds', 'D', ['tier'], [0.01, 1.0])->observe(0.5, 'app');
        $text = PrometheusText::render(Registry::merge([self::wire($a), self::wire($b)]));
        self::assertStringContainsString("d_seconds_bucket{tier=\"app\",le=\"0.01\"} 1\n", $text);
        self::assertStringContainsString("d_seconds_bucket{tier=\"app\",le=\"1\"} 3\n", $text);
        self::assertStringContainsString("d_seconds_bucket{tier=\"app\",le=\"+Inf\"} 4\n", $text);
        self::assertStringContainsString("d_seconds_count{tier=\"app\"} 4\n", $text);
        self::assertStringContainsString("d_seconds_sum{tier=\"app\"} 7.701\n", $text);
    }

    public function testGaugesGoUpAndDownAndLabelValuesAreEscaped(): void
    {
        $registry = new Registry();
        $gauge = $registry->gauge('queue_depth', "Jobs\nwaiting", ['queue']);
        $gauge->add(3, 'a"b\\c');
        $gauge->add(-1, 'a"b\\c');
        self::assertSame(
            "# HELP queue_depth Jobs\\nwaiting\n# TYPE queue_depth gauge\nqueue_depth{queue=\"a\\\"b\\\\c\"} 2\n",
            PrometheusText::render($registry->export()),
        );
    }

    public function testAskingAgainForANameReturnsTheSameMetric(): void
    {
        $registry = new Registry();
        self::assertSame($registry->counter('x_total', 'X'), $registry->counter('x_total', 'X'));
    }

    public function testADeclarationWithOtherLabelsIsRefused(): void
    {
        $registry = new Registry();
        $registry->counter('x_total', 'X', ['a']);
        $this->expectException(\Error::class);
        $registry->counter('x_total', 'X', ['b']);
    }

    public function testTheWrongNumberOfLabelValuesIsRefused(): void
    {
        $this->expectException(\ValueError::class);
        (new Registry())->counter('x_total', 'X', ['a', 'b'])->inc(1, 'only-one');
    }

    public function testABadNameIsRefused(): void
    {
        $this->expectException(\ValueError::class);
        (new Registry())->gauge('9lives', 'X');
    }

    public function testACounterCannotGoDown(): void
    {
        $this->expectException(\ValueError::class);
        (new Registry())->counter('x_total', 'X')->inc(-1);
    }

    /**
     * Through JSON, as a worker sends it.
     *
     * @return array<string, array{type: string, help: string, labels: list<string>, buckets: list<float>, series: array<string, float|array{list<int>, float, int}>}>
     */
    private static function wire(Registry $registry): array
    {
        $decoded = json_decode((string) json_encode($registry->export(), JSON_PRESERVE_ZERO_FRACTION), true);
        \assert(\is_array($decoded));
        /** @var array<string, array{type: string, help: string, labels: list<string>, buckets: list<float>, series: array<string, float|array{list<int>, float, int}>}> $decoded */
        return $decoded;
    }
}
