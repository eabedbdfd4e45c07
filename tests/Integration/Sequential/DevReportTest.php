<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Sequential;

use Kiln\Tests\Support\HttpClient;
use Kiln\Tests\Support\KilnProcess;
use PHPUnit\Framework\TestCase;

/**
 * `kiln serve --dev` on the sequential tier: each fixture script is requested twice on one worker, and the kinds
 * the log reports for it must be exactly the expected ones (none for a clean script).
 */
final class DevReportTest extends TestCase
{
    private const ROOT = __DIR__ . '/../../Fixtures/dev';

    /** @return array<string, array{string, list<string>, string}> script => [script, kinds, what the report names] */
    public static function scripts(): array
    {
        return [
            'a clean script' => ['/clean.php', [], ''],
            'a cache filled once with the same value' => ['/memo.php', [], ''],
            'a script that ends its worker' => ['/shutdown.php', [], ''],
            'a counting static variable' => ['/counter.php', ['static'], 'dev_fixture_count()::$count (counter.php:2)'],
            'a static property' => ['/property.php', ['static'], 'DevFixtureRegistry::$visits (registry.php:2)'],
            'a growing static array' => ['/memory.php', ['memory', 'static'], 'DevFixtureKeeper::$kept'],
            'putenv()' => ['/putenv.php', ['putenv'], 'DEV_FIXTURE_RUN'],
            'an autoloader registered by the script' => ['/autoloader.php', ['autoloader'], 'a closure at autoloader.php:2'],
            'a constant' => ['/constant.php', ['constant'], 'DEV_FIXTURE_FLAG (constant.php:3)'],
            'a function the script declares in a block' => ['/function.php', ['function'], 'dev_fixture_helper() (function.php:3)'],
            'a class the script declares in a block' => ['/class.php', ['class'], 'DevFixtureThing (class.php:3)'],
            'an unguarded function in the script ends its worker' => ['/toplevel.php', [], ''],
        ];
    }

    public function testEachLeakIsReportedWithItsKindAndCleanScriptsAreNot(): void
    {
        $kiln = KilnProcess::start(self::ROOT, ['--tier=sequential', '--dev', '--workers=1']);
        try {
            foreach (self::scripts() as [$script]) {
                for ($i = 0; $i < 2; $i++) {
                    HttpClient::get($kiln->baseUrl() . $script);
                }
            }
            // The last request's report is written before its response: the log is complete now.
            $log = $kiln->log();
        } finally {
            $kiln->stop();
        }
        preg_match_all('~--dev: (/\S+) \[(\w+)\] leaves (.*)~', $log, $matches, PREG_SET_ORDER);
        $reported = [];
        foreach ($matches as [, $script, $kind, $what]) {
            $reported[$script][$kind] = $what;
        }
        foreach (self::scripts() as $case => [$script, $kinds, $names]) {
            $found = array_keys($reported[$script] ?? []);
            sort($found);
            self::assertSame($kinds, $found, "$case ($script):\n$log");
            if ($names !== '') {
                self::assertStringContainsString($names, implode("\n", $reported[$script]), $case);
            }
        }
    }

    public function testDevKeepsPhpsOwnIniResetOn(): void
    {
        // The report pauses the cycle collector around each script (gc_disable() is an ini change): the worker's
        // settings are taken before that, so PHP's own reset stays on and no warning blames the user's settings.
        $kiln = KilnProcess::start(self::ROOT, ['--tier=sequential', '--dev', '--workers=1']);
        try {
            self::assertSame(200, HttpClient::get($kiln->baseUrl() . '/clean.php')['status']);
            self::assertSame(200, HttpClient::get($kiln->baseUrl() . '/clean.php')['status']);
            $log = $kiln->log();
        } finally {
            $kiln->stop();
        }
        self::assertStringNotContainsString('native ini reset is not available', $log);
        self::assertStringNotContainsString('zend.enable_gc', $log);
    }

    public function testWithoutDevNothingIsReported(): void
    {
        $kiln = KilnProcess::start(self::ROOT, ['--tier=sequential', '--workers=1']);
        try {
            HttpClient::get($kiln->baseUrl() . '/counter.php');
            self::assertSame('counter 2', HttpClient::get($kiln->baseUrl() . '/counter.php')['body']);
            self::assertStringNotContainsString('--dev', $kiln->log());
        } finally {
            $kiln->stop();
        }
    }
}
