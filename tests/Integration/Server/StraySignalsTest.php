<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Server;

use Kiln\Tests\Integration\Background\PendingRequest;
use Kiln\Tests\Support\HttpClient;
use Kiln\Tests\Support\KilnProcess;
use PHPUnit\Framework\TestCase;

/** Signals Kiln gives no meaning, sent to its processes by habit or by a signal to the whole service, stop nothing. */
final class StraySignalsTest extends TestCase
{
    private const APP = __DIR__ . '/../../Fixtures/server/app.php';

    private const TASKS = __DIR__ . '/../../Fixtures/tasks/app.php';

    public function testUsr2AndAlrmToTheSupervisorAreLoggedAndTheServerGoesOnServing(): void
    {
        $kiln = KilnProcess::start(self::APP, ['--workers=1']);
        foreach (['SIGUSR2' => SIGUSR2, 'SIGALRM' => SIGALRM] as $name => $signal) {
            $kiln->signal($signal);
            $kiln->waitForLog("/\\[warning\\] \\[supervisor {$kiln->pid()}\\] $name ignored: Kiln acts on SIGTERM/", 5.0);
            self::assertTrue($kiln->isRunning(), "the server runs on after $name");
            self::assertSame(200, HttpClient::get($kiln->baseUrl() . '/version')['status']);
        }
        self::assertSame(0, $kiln->stop());
    }

    /**
     * `systemctl kill -s USR1` (or USR2) signals every process of the service: a task worker in the middle of a call
     * finishes it, a user process runs on, and no worker is replaced.
     */
    public function testUsr1AndUsr2ToEveryProcessLeaveATaskCallAndAUserProcessRunning(): void
    {
        $events = (string) tempnam(sys_get_temp_dir(), 'kiln-signal-events-');
        try {
            $kiln = KilnProcess::start(self::TASKS, ['--workers=1', '--task-workers=1'], ['KILN_TEST_EVENTS' => $events], 20.0);
            $ticker = self::waitForLine($events, '/^ticker (\d+)$/m');
            $call = PendingRequest::send($kiln->host(), $kiln->port(), '/long?s=2');
            $taskWorker = self::waitForLine($events, '/^running (\d+)$/m');
            $processes = [$kiln->pid(), ...$kiln->workerPids()];
            self::assertContains($ticker, $processes);
            self::assertContains($taskWorker, $processes);

            foreach ([SIGUSR1, SIGUSR2] as $signal) {
                foreach ($processes as $pid) {
                    posix_kill($pid, $signal);
                }
            }

            $answer = json_decode($call->receive(15.0)['body'], true);
            self::assertSame(['result' => $taskWorker], $answer, 'the call in flight was answered by its task worker');
            file_put_contents($events, '');
            self::assertSame($ticker, self::waitForLine($events, '/^ticker (\d+)$/m'), 'the user process runs on');
            self::assertSame($processes, [$kiln->pid(), ...$kiln->workerPids()], 'no process was replaced');
            self::assertStringNotContainsString('killed by signal', $kiln->log());
            self::assertSame(0, $kiln->stop());
        } finally {
            @unlink($events);
        }
    }

    private static function waitForLine(string $file, string $regex): int
    {
        $deadline = microtime(true) + 15.0;
        while (preg_match($regex, (string) file_get_contents($file), $m) !== 1) {
            if (microtime(true) > $deadline) {
                self::fail("no line matching $regex in $file");
            }
            usleep(50_000);
        }
        return (int) $m[1];
    }
}
