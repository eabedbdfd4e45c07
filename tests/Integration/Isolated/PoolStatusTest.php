<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Isolated;

use Kiln\Tests\Support\KilnProcess;

/** `kiln status` shows the isolated tier's php-cgi processes (the parent and its children) and the memory they take together (PSS). */
final class PoolStatusTest extends IsolatedTestCase
{
    public function testStatusShowsThePhpCgiPoolWithItsProcessesAndTheirPssTotal(): void
    {
        $pidFile = sys_get_temp_dir() . '/kiln-test-' . bin2hex(random_bytes(4)) . '.pid';
        $this->serve(['KILN_TEST_POOL_SIZE' => '2'], ["--pid-file=$pidFile"]);
        self::assertSame(200, $this->get('/legacy/hello.php')['status']);
        $pids = [...$this->phpCgiParents(), ...$this->waitForChildren(2)];
        self::assertCount(3, $pids, 'the parent and its two children');

        $deadline = microtime(true) + 10;
        while (true) {
            [$code, $stdout, $stderr] = KilnProcess::run(['status', "--pid-file=$pidFile"]);
            self::assertSame(0, $code, $stderr);
            if (preg_match('~^  php-cgi pool  processes (\d+)  pss ([\d.]+)M$~m', $stdout, $m) === 1) {
                break;
            }
            if (microtime(true) > $deadline) {
                self::fail("no php-cgi pool line in kiln status:\n$stdout");
            }
            usleep(100_000);
        }
        self::assertSame('3', $m[1]);

        $expected = 0;
        foreach ($pids as $pid) {
            if (preg_match('/^Pss:\s+(\d+) kB$/m', (string) file_get_contents("/proc/$pid/smaps_rollup"), $p) !== 1) {
                self::fail("no Pss line for php-cgi pid $pid");
            }
            $expected += (int) $p[1] * 1024;
        }
        // The status is rewritten every second while the children run on: the same order of size.
        self::assertEqualsWithDelta($expected / 1048576, (float) $m[2], max(4.0, $expected / 1048576 / 2), $stdout);
    }
}
