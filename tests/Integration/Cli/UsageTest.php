<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Cli;

use Kiln\Tests\Support\KilnProcess;
use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;

/** What `bin/kiln` answers a user asking for help or making a mistake: the exit code and one line naming what they typed. */
final class UsageTest extends TestCase
{
    private const APP = __DIR__ . '/../../Fixtures/http/app.php';

    /** @return iterable<string, array{string}> */
    public static function commands(): iterable
    {
        foreach (['serve', 'stop', 'reload', 'status'] as $command) {
            yield $command => [$command];
        }
    }

    #[DataProvider('commands')]
    public function testACommandsHelpOptionShowsItsHelpAndExitsZero(string $command): void
    {
        [$code, $stdout, $stderr] = KilnProcess::run([$command, '--help']);
        self::assertSame(0, $code, $stderr);
        self::assertStringStartsWith("Usage:\n  kiln $command ", $stdout);
        self::assertSame('', $stderr);
    }

    /** @return iterable<string, array{list<string>, array<string, string>, string}> */
    public static function mistakes(): iterable
    {
        yield 'no connections' => [['--connections=0'], [], "kiln: --connections must be 1 or more, got 0\n"];
        yield 'workers from the environment' => [[], ['KILN_WORKERS' => 'abc'], "kiln: KILN_WORKERS must be a whole number, got 'abc'\n"];
        yield 'one address twice' => [['--listen=127.0.0.1:0', '--listen=127.0.0.1:19999', '--listen=127.0.0.1:19999'], [], "kiln: --listen=127.0.0.1:19999 is given twice\n"];
    }

    /**
     * @param list<string> $options
     * @param array<string, string> $env
     */
    #[DataProvider('mistakes')]
    public function testAMistakeIsAUsageErrorNamingWhatTheUserTyped(array $options, array $env, string $line): void
    {
        [$code, , $stderr] = KilnProcess::run(['serve', self::APP, ...$options], 10.0, $env);
        self::assertSame(2, $code);
        self::assertSame($line, $stderr);
    }

    /** @return iterable<string, array{string}> */
    public static function unusablePaths(): iterable
    {
        yield 'access log' => ['--access-log'];
        yield 'error log' => ['--error-log'];
        yield 'pid file' => ['--pid-file'];
    }

    /** Well-formed, but not usable here: exit code 1 (docs/configuration.md), one line, nothing left listening. */
    #[DataProvider('unusablePaths')]
    public function testAPathThatCannotBeOpenedStopsStartUpWithExitCodeOne(string $option): void
    {
        [$code, , $stderr] = KilnProcess::run(['serve', self::APP, '--listen=127.0.0.1:0', "$option=/nonexistent-kiln-dir/file"]);
        self::assertSame(1, $code, $stderr);
        self::assertSame(1, substr_count($stderr, "\n"), $stderr);
        self::assertStringContainsString('/nonexistent-kiln-dir/file', $stderr);
    }
}
