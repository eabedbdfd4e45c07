<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Server;

use Kiln\Server\StatusFile;
use Kiln\Server\SupervisorState;
use PHPUnit\Framework\TestCase;

final class StatusFileTest extends TestCase
{
    private string $path;

    protected function setUp(): void
    {
        $this->path = sys_get_temp_dir() . '/kiln-status-test-' . getmypid() . '-' . bin2hex(random_bytes(4)) . '.status.json';
    }

    protected function tearDown(): void
    {
        @unlink($this->path);
    }

    public function testTheSidecarsMemoryIsMeasuredAgainOnlyAfterTenSecondsOrWhenTheProcessesChange(): void
    {
        $now = 1000.0;
        $status = new StatusFile($this->path, static function () use (&$now): float {
            return $now;
        });
        $me = (int) getmypid();

        $first = $this->pss($status, [$me]);
        self::assertIsInt($first, 'Linux gives /proc/PID/smaps_rollup');

        // This process grows by 64 MiB of written memory; its PSS grows with it.
        $ballast = str_repeat('k', 64 << 20);
        $now += StatusFile::PSS_EVERY - 1.0;
        self::assertSame($first, $this->pss($status, [$me]), 'within the interval: the last measure');

        $now += 1.0;
        $grown = $this->pss($status, [$me]);
        self::assertGreaterThan($first + (32 << 20), $grown, 'after the interval: measured again');

        // A process that is gone has no PSS: measured at once, the set answers null instead of the last measure.
        $child = proc_open(['true'], [], $pipes);
        self::assertIsResource($child);
        $gone = proc_get_status($child)['pid'];
        proc_close($child);
        $now += 1.0;
        self::assertNull($this->pss($status, [$gone]), 'other processes: measured at once');
        unset($ballast);
    }

    public function testAClockThatWentBackMeasuresAgain(): void
    {
        $now = 1000.0;
        $status = new StatusFile($this->path, static function () use (&$now): float {
            return $now;
        });
        $me = (int) getmypid();
        $first = $this->pss($status, [$me]);
        $ballast = str_repeat('k', 64 << 20);
        $now -= 5.0;
        self::assertGreaterThan((int) $first + (32 << 20), (int) $this->pss($status, [$me]));
        unset($ballast);
    }

    /** @param list<int> $sidecars */
    private function pss(StatusFile $status, array $sidecars): ?int
    {
        $status->write(SupervisorState::Running, [], [], [], $sidecars);
        $data = $status->read();
        self::assertIsArray($data);
        self::assertIsArray($data['sidecars'] ?? null);
        self::assertSame(\count($sidecars), $data['sidecars']['processes']);
        $pss = $data['sidecars']['pss'];
        self::assertTrue($pss === null || \is_int($pss));

        return $pss;
    }
}
