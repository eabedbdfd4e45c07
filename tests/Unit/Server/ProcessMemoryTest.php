<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Server;

use Kiln\Server\Internal\ProcessMemory;
use PHPUnit\Framework\TestCase;

final class ProcessMemoryTest extends TestCase
{
    public function testThePssOfThisProcessIsReadFromTheKernelAndIsBelowItsResidentSize(): void
    {
        $pss = ProcessMemory::pss((int) getmypid());
        self::assertNotNull($pss, 'Linux gives /proc/PID/smaps_rollup');
        self::assertGreaterThan(0, $pss);
        if (preg_match('/^Rss:\s+(\d+) kB$/m', (string) file_get_contents('/proc/self/smaps_rollup'), $m) !== 1) {
            self::fail('no Rss line in /proc/self/smaps_rollup');
        }
        self::assertLessThanOrEqual((int) $m[1] * 1024 * 2, $pss);
    }

    public function testAProcessThatIsGoneHasNoPssAndIsLeftOutOfATotal(): void
    {
        $child = proc_open(['true'], [], $pipes);
        self::assertIsResource($child);
        $pid = proc_get_status($child)['pid'];
        proc_close($child);

        self::assertNull(ProcessMemory::pss($pid));
        self::assertNull(ProcessMemory::pss(0));
        self::assertNull(ProcessMemory::pssTotal([$pid]));
        self::assertSame(ProcessMemory::pss((int) getmypid()) !== null, ProcessMemory::pssTotal([$pid, (int) getmypid()]) !== null);
        self::assertNull(ProcessMemory::pssTotal([]));
    }
}
