<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Site\Sequential;

use PHPUnit\Framework\TestCase;

/**
 * The engine features of the sequential tier, each checked in a child PHP process (booting the Runtime
 * changes process-wide state: the header hook, the globals, the session module).
 */
final class RuntimeTest extends TestCase
{
    /** @var array<string, mixed>|null */
    private static ?array $report = null;

    public static function setUpBeforeClass(): void
    {
        if (!\extension_loaded('ffi')) {
            self::fail('the sequential tier needs ext-ffi: scripts/install-deps.sh installs it');
        }
        $process = proc_open([PHP_BINARY, __DIR__ . '/../../../Fixtures/sequential/engine.php'], [1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes);
        self::assertIsResource($process);
        stream_get_contents($pipes[1]);
        $lines = explode("\n", trim((string) stream_get_contents($pipes[2])));
        proc_close($process);
        $report = json_decode((string) end($lines), true);
        self::assertIsArray($report, 'engine.php printed: ' . implode("\n", $lines));
        self::$report = $report;
    }

    /** @return array<string, mixed> */
    private static function report(): array
    {
        self::assertNotNull(self::$report);
        return self::$report;
    }

    public function testEveryEngineFeaturePassesItsSelfTestOnThisPhp(): void
    {
        self::assertSame([], self::report()['missing']);
        self::assertSame([], self::report()['logged']);
    }

    public function testAScriptRunsAtGlobalScopeAndItsGlobalsCanBeUnset(): void
    {
        self::assertSame('top', self::report()['global']);
        self::assertSame('top', self::report()['global_left']);
        self::assertFalse(self::report()['global_unset']);
    }

    public function testTheResponseIsBuiltFromPhpsOwnHeaderListAndStatus(): void
    {
        self::assertSame([
            'status' => 418, 'body' => 'body;', 'kept' => 'yes', 'type' => 'text/html; charset=UTF-8',
            'status_header' => null, 'refused' => 1, 'headers_after' => [],
        ], self::report()['capture']);
    }

    public function testOutputAfterEveryBufferWasEndedIsCaughtAndHeadersCanBeSentAgain(): void
    {
        self::assertSame(['body' => 'direct;', 'headers_sent_after' => false], self::report()['ended']);
    }

    public function testIniChangesAreUndone(): void
    {
        [$before, $after] = self::report()['ini'];
        self::assertSame($before, $after);
        self::assertNotSame('5', $after['precision']);
    }

    public function testUploadsAreAcceptedOnlyWhileRegistered(): void
    {
        self::assertSame(['during' => true, 'after' => false], self::report()['uploads']);
    }

    public function testPhpInputReadsTheBodyGiven(): void
    {
        self::assertSame(['the body', ''], self::report()['input']);
    }

    public function testTheSessionCookieDecidesTheSessionOfEachRequest(): void
    {
        self::assertSame(['kilnengineone', 'kilnenginetwo', ''], self::report()['session']);
    }

    public function testALocationAfterAPostIsA303AndAfterAGetA302(): void
    {
        self::assertSame([303, 302], self::report()['location']);
    }

    public function testARegisteredShutdownFunctionIsSeen(): void
    {
        self::assertTrue(self::report()['shutdown_seen']);
    }
}
