<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Server\Internal;

use Kiln\Loop\Loop;
use Kiln\Server\Internal\StallReport;
use Kiln\Server\Log;
use Kiln\Server\LogFile;
use PHPUnit\Framework\TestCase;

final class StallReportTest extends TestCase
{
    public function testTheReportNamesTheRequestsWhereTheCodeStoodAndTheCallsThatLedThere(): void
    {
        $text = StallReport::describe(['GET /spin', 'POST /upload?x=1'], [
            ['file' => '/app/app.php', 'line' => 12, 'function' => 'report', 'class' => StallReport::class, 'type' => '->'],
            ['file' => '/kiln/src/App/Dispatcher.php', 'line' => 57, 'function' => '{closure}'],
            ['function' => 'work', 'class' => 'FiberPool', 'type' => '->'],
        ]);
        self::assertSame("event loop stalled, in flight: GET /spin, POST /upload?x=1\n"
            . "holding the loop at /app/app.php(12)\n"
            . "#0 /kiln/src/App/Dispatcher.php(57): {closure}()\n"
            . '#1 [internal function]: FiberPool->work()', $text);
    }

    public function testWithoutARequestItSaysWhatElseHoldsTheLoopAndADeepStackIsCut(): void
    {
        $frames = [['file' => '/app/timer.php', 'line' => 3, 'function' => 'report']];
        for ($i = 0; $i < 40; $i++) {
            $frames[] = ['file' => '/app/deep.php', 'line' => $i, 'function' => 'down'];
        }
        $text = StallReport::describe([], $frames);
        self::assertStringStartsWith('event loop stalled, in flight: no request (a timer, a background job or a connection handler)', $text);
        self::assertStringContainsString("\n#29 /app/deep.php(29): down()\n... 10 more frames", $text);
        self::assertStringNotContainsString('#30', $text);
    }

    public function testTheHandlerRunsBetweenTwoInstructionsOfTheInterruptedCodeLogsAndReturnsIntoIt(): void
    {
        $line = '';
        $path = (string) tempnam(sys_get_temp_dir(), 'kiln-stall-report-');
        $async = pcntl_async_signals();
        $previous = pcntl_signal_get_handler(StallReport::SIGNAL);
        try {
            (new StallReport(new Log(new LogFile($path)), static fn(): array => ['GET /busy']))->install();
            posix_kill((int) getmypid(), StallReport::SIGNAL);
            $deadline = microtime(true) + 5;
            while (!str_contains($line, 'holding the loop') && microtime(true) < $deadline) {
                // no pcntl_signal_dispatch(): the handler runs between two instructions of this loop
                $line = (string) file_get_contents($path);
            }
        } finally {
            Loop::reserveSignal(StallReport::SIGNAL, null);
            pcntl_signal(StallReport::SIGNAL, $previous);
            @unlink($path);
            pcntl_async_signals($async);
        }
        self::assertStringContainsString('[warning]', $line);
        self::assertStringContainsString('event loop stalled, in flight: GET /busy | holding the loop at ' . __FILE__ . '(', $line);
        self::assertStringContainsString(__CLASS__ . '->' . __FUNCTION__ . '()', $line);
    }

    public function testOnceInstalledTheLoopRefusesToWatchItsSignalSoNeitherHandlerReplacesTheOther(): void
    {
        $async = pcntl_async_signals();
        try {
            self::assertTrue((new StallReport(new Log(new LogFile('/dev/null')), static fn(): array => []))->install());
            $installed = pcntl_signal_get_handler(StallReport::SIGNAL);
            try {
                Loop::onSignal(StallReport::SIGNAL, static function (): void {});
                self::fail('the loop watched the report\'s signal');
            } catch (\Error $e) {
                self::assertStringStartsWith('SIGUSR2 cannot be watched in a Kiln worker with --stall-timeout: its stall report uses it', $e->getMessage());
            }
            self::assertSame($installed, pcntl_signal_get_handler(StallReport::SIGNAL), 'the report keeps its handler');
            $other = Loop::onSignal(SIGUSR1, static function (): void {});
            Loop::cancel($other); // other signals are watched as ever
        } finally {
            Loop::reserveSignal(StallReport::SIGNAL, null);
            pcntl_signal(StallReport::SIGNAL, SIG_DFL);
            pcntl_async_signals($async);
        }
    }

    public function testAnAppThatHandlesTheSignalAlreadyKeepsItAndTheReportIsSkippedWithAWarning(): void
    {
        $path = (string) tempnam(sys_get_temp_dir(), 'kiln-stall-report-');
        $async = pcntl_async_signals();
        $apps = static function (): void {};
        pcntl_signal(StallReport::SIGNAL, $apps);
        try {
            self::assertFalse((new StallReport(new Log(new LogFile($path)), static fn(): array => []))->install());
            self::assertSame($apps, pcntl_signal_get_handler(StallReport::SIGNAL));
            $id = Loop::onSignal(StallReport::SIGNAL, static function (): void {}); // not reserved: the app may watch it
            Loop::cancel($id);
            self::assertMatchesRegularExpression('~\[warning\] \[[^]]+\] the app handles SIGUSR2 \(Loop::onSignal\(\) or pcntl_signal\(\) at boot\)~', (string) file_get_contents($path));
        } finally {
            Loop::reserveSignal(StallReport::SIGNAL, null);
            pcntl_signal(StallReport::SIGNAL, SIG_DFL);
            pcntl_async_signals($async);
            @unlink($path);
        }
    }

    /** Only the supervisor asks for the report: a USR2 from any other process (a signal to the whole service) is ignored. */
    public function testASignalFromAnotherProcessThanTheOneNamedWritesNoReport(): void
    {
        $path = (string) tempnam(sys_get_temp_dir(), 'kiln-stall-report-');
        $async = pcntl_async_signals();
        $previous = pcntl_signal_get_handler(StallReport::SIGNAL);
        try {
            (new StallReport(new Log(new LogFile($path)), static fn(): array => ['GET /busy'], posix_getppid()))->install();
            posix_kill((int) getmypid(), StallReport::SIGNAL);
            pcntl_signal_dispatch();
            usleep(1000);
            pcntl_signal_dispatch();
            self::assertSame('', (string) file_get_contents($path));
        } finally {
            Loop::reserveSignal(StallReport::SIGNAL, null);
            pcntl_signal(StallReport::SIGNAL, $previous);
            @unlink($path);
            pcntl_async_signals($async);
        }
    }
}
