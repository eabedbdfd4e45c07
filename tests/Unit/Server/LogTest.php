<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Server;

use Kiln\Server\Log;
use Kiln\Server\LogFile;
use Kiln\Server\LogLevel;
use PHPUnit\Framework\TestCase;

final class LogTest extends TestCase
{
    private string $path;

    protected function setUp(): void
    {
        $this->path = (string) tempnam(sys_get_temp_dir(), 'kiln-log-test-');
    }

    protected function tearDown(): void
    {
        @unlink($this->path);
        @unlink($this->path . '.1');
    }

    public function testALineHasTimeLevelSourceAndMessage(): void
    {
        $line = Log::format(1795307808.123, LogLevel::Info, 'supervisor 1234', 'ready');
        self::assertSame("[2026-11-22T00:36:48.123Z] [info] [supervisor 1234] ready\n", $line);
    }

    public function testAMultiLineMessageStaysOneLine(): void
    {
        $line = Log::format(0.0, LogLevel::Error, 'worker 1 9', "boom\n#0 trace\n");
        self::assertSame(1, substr_count($line, "\n"));
        self::assertStringContainsString('boom | #0 trace', $line);
    }

    public function testMessagesBelowTheThresholdAreDropped(): void
    {
        $log = new Log(new LogFile($this->path), LogLevel::Warning);
        $log->info('quiet');
        $log->warning('loud');
        $log->identify('worker 2');
        $log->error('louder');
        $text = (string) file_get_contents($this->path);
        self::assertStringNotContainsString('quiet', $text);
        self::assertMatchesRegularExpression('/\[warning\] \[supervisor \d+\] loud/', $text);
        self::assertMatchesRegularExpression('/\[error\] \[worker 2 \d+\] louder/', $text);
    }

    public function testReopenStartsANewFileAfterRotation(): void
    {
        $file = new LogFile($this->path);
        $file->write("one\n");
        rename($this->path, $this->path . '.1');
        $file->write("two\n");
        $file->reopen();
        $file->write("three\n");
        self::assertSame("one\ntwo\n", file_get_contents($this->path . '.1'));
        self::assertSame("three\n", file_get_contents($this->path));
    }

    public function testAnEntryForAWorkersStandardErrorIsWrittenWhateverTheThreshold(): void
    {
        $log = new Log(new LogFile($this->path), LogLevel::Error);
        $log->warning('a warning of Kiln\'s own');
        $log->logAs('worker 2', 4321, 'info', 'PHP Deprecated:  d');
        $written = (string) file_get_contents($this->path);
        self::assertStringNotContainsString('of Kiln\'s own', $written);
        self::assertMatchesRegularExpression('~^\[[^]]+\] \[info\] \[worker 2 4321\] PHP Deprecated:  d$~m', $written);
    }

    public function testAPhpMessageHasTheLevelOfItsPrefix(): void
    {
        foreach ([
            'PHP Fatal error:  Uncaught Error: x' => LogLevel::Error,
            'PHP Parse error:  syntax error' => LogLevel::Error,
            'PHP Recoverable fatal error:  r' => LogLevel::Error,
            'PHP Core error:  c' => LogLevel::Error,
            'PHP Compile error:  c' => LogLevel::Error,
            'PHP Warning:  Undefined variable $a' => LogLevel::Warning,
            'PHP Core warning:  c' => LogLevel::Warning,
            'PHP Notice:  n' => LogLevel::Info,
            'PHP Deprecated:  d' => LogLevel::Info,
            'PHP Strict Standards:  s' => LogLevel::Info,
            'a line of the app\'s own' => LogLevel::Warning,
            'my PHP Fatal error:  not a prefix' => LogLevel::Warning,
        ] as $message => $level) {
            self::assertSame($level, LogLevel::ofPhpMessage($message), $message);
        }
    }

    public function testAnUnknownLevelIsRejected(): void
    {
        $this->expectException(\ValueError::class);
        LogLevel::parse('verbose');
    }
}
