<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Bench;

use PHPUnit\Framework\TestCase;

/**
 * bench/lib/report.php turns each bench/run into the table of bench/RESULTS.md; its own checks (wrk output
 * parsing, medians, ratios, the CPU columns, a report built from a data directory) run here, so a change to
 * the report that breaks a column is found before a benchmark is recorded with it.
 */
final class ReportSelfTestTest extends TestCase
{
    public function testTheReportPassesItsSelfTest(): void
    {
        $script = \dirname(__DIR__, 3) . '/bench/lib/report.php';
        exec(escapeshellarg(PHP_BINARY) . ' ' . escapeshellarg($script) . ' --selftest 2>&1', $lines, $status);
        $output = implode("\n", $lines);
        self::assertSame(0, $status, $output);
        self::assertMatchesRegularExpression('/^\d+ passed, 0 failed$/m', $output);
    }
}
