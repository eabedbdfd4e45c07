<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Sequential;

use Kiln\Tests\Support\KilnProcess;

/**
 * What a script writes to standard error (PHP's warnings and fatal errors, error_log(), fwrite(STDERR, …)) reaches
 * the error log as entries of its format, with the time, a level and the worker's label and pid: the supervisor
 * reads each worker's standard error (needs FFI, as these tests do).
 */
final class StandardErrorTest extends SequentialTestCase
{
    public function testEveryLineIsAnEntryOfTheJsonLogWithItsLevelAndWorker(): void
    {
        $this->server = KilnProcess::start(self::APP, ['--workers=1', '--error-log-format=json']);
        $pid = $this->workerPid();
        $response = $this->get('/stderr.php?mark=m1');
        self::assertSame([200, 'said m1'], [$response['status'], $response['body']]);
        self::assertSame(500, $this->get('/uncaught.php')['status']);
        self::assertSame(500, $this->get('/deep.php')['status']);
        $this->server()->waitForLog('~thrown in [^"]*deep\.php~', 5.0);

        /** @var list<array{time: string, level: string, source: string, pid: int, message: string}> $entries */
        $entries = [];
        foreach (explode("\n", trim($this->server()->log())) as $line) {
            $entry = json_decode($line, true);
            self::assertIsArray($entry, "every line of the log is a JSON object, not: $line");
            self::assertSame(['time', 'level', 'source', 'pid', 'message'], array_keys($entry), $line);
            /** @var array{time: string, level: string, source: string, pid: int, message: string} $entry */
            $entries[] = $entry;
        }
        $find = static function (string $needle) use ($entries): array {
            foreach ($entries as $entry) {
                if (str_contains($entry['message'], $needle)) {
                    return $entry;
                }
            }
            self::fail("no entry says '$needle'");
        };
        foreach ([
            ['PHP Warning:  a warning m1 in ', 'warning'],
            ['PHP Deprecated:  a deprecation m1 in ', 'info'],
            ['error_log m1', 'warning'],
            ['written to STDERR m1', 'warning'],
            ['PHP Fatal error:  Uncaught RuntimeException: nobody caught this', 'error'],
        ] as [$needle, $level]) {
            $entry = $find($needle);
            self::assertSame([$level, 'worker 1', $pid], [$entry['level'], $entry['source'], $entry['pid']], $needle);
            self::assertMatchesRegularExpression('/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/', $entry['time']);
        }
        $uncaught = $find('nobody caught this')['message'];
        self::assertStringContainsString("\nStack trace:\n#0 {main}\n  thrown in ", $uncaught, 'one entry, the trace with it');
        // A trace longer than the 8 KiB pieces PHP writes it in is one entry too, at the level of its first line.
        $deep = $find('Uncaught RuntimeException: kiln deep trace');
        self::assertSame('error', $deep['level']);
        self::assertGreaterThan(8192, \strlen($deep['message']));
        self::assertMatchesRegularExpression('~\n#301 \{main\}\n  thrown in \S+/deep\.php on line \d+$~', $deep['message']);
        foreach ($entries as $entry) {
            self::assertDoesNotMatchRegularExpression('~^(#\d|  thrown in)~', $entry['message'], 'no piece of a trace on its own');
        }
    }

    /**
     * A program a script started in the background keeps the worker's standard error after the worker is gone: its
     * lines are still filed under that worker, and it is not killed by SIGPIPE at its first write.
     */
    public function testWhatABackgroundProgramWritesAfterItsWorkerExitedIsStillFiled(): void
    {
        $pid = $this->workerPid();
        self::assertSame('started b1', $this->get('/background-stderr.php?mark=b1')['body']);
        $this->waitForReplacement($pid);
        $this->server()->waitForLog("~\\[warning\\] \\[worker 1 $pid\\] background said first b1$~", 5.0);
        $this->server()->waitForLog("~\\[warning\\] \\[worker 1 $pid\\] background said second b1$~", 5.0);
    }

    public function testTheTextLogGivesEachLineTheTimeLevelAndWorker(): void
    {
        $pid = $this->workerPid();
        self::assertSame(200, $this->get('/stderr.php?mark=t1')['status']);
        $this->server()->waitForLog('~written to STDERR t1~', 5.0);
        $stamp = '\[\d{4}-\d\d-\d\dT[\d:.]+Z\]';
        foreach (['\[warning\] \[worker 1 ' . $pid . '\] PHP Warning:  a warning t1 in ', '\[info\] \[worker 1 ' . $pid . '\] PHP Deprecated:  a deprecation t1',
            '\[warning\] \[worker 1 ' . $pid . '\] error_log t1$', '\[warning\] \[worker 1 ' . $pid . '\] written to STDERR t1$'] as $entry) {
            self::assertMatchesRegularExpression("~^$stamp $entry~m", $this->server()->log());
        }
        self::assertDoesNotMatchRegularExpression('~^(PHP |error_log t1|written to)~m', $this->server()->log(), 'no line as PHP wrote it');
    }
}
