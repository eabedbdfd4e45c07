<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Cli;

use Kiln\Tests\Support\HttpClient;
use Kiln\Tests\Support\KilnProcess;
use Kiln\Tests\Support\PeerProcess;
use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;

final class JitTest extends TestCase
{
    public function testWorkersRunWithTheJitByDefault(): void
    {
        self::assertTrue(\extension_loaded('Zend OPcache'), 'opcache is missing: scripts/install-deps.sh installs php8.2-opcache');
        $server = KilnProcess::start(\dirname(__DIR__, 2) . '/Fixtures/http/app.php', ['--workers=1']);
        try {
            self::assertSame('{"jit":true}', HttpClient::get($server->baseUrl() . '/jit')['body']);
        } finally {
            $server->stop();
        }
    }

    /** The relaunch with the JIT keeps the options the user gave PHP itself; a -d of theirs wins over Kiln's. */
    public function testTheRelaunchKeepsPhpsOwnOptions(): void
    {
        self::assertTrue(\extension_loaded('Zend OPcache'), 'opcache is missing: scripts/install-deps.sh installs php8.2-opcache');
        $root = sys_get_temp_dir() . '/kiln-jit-' . getmypid() . '-' . bin2hex(random_bytes(3));
        mkdir($root . '/public', 0755, true);
        file_put_contents($root . '/public/ini.php', '<?php echo ini_get("memory_limit"), "|", ini_get("opcache.jit_buffer_size"), "|", '
            . '(int) (opcache_get_status(false)["jit"]["on"] ?? false);');
        $kiln = \dirname(__DIR__, 3) . '/bin/kiln';
        $server = KilnProcess::launch([PHP_BINARY, '-d', 'memory_limit=77M', '-d', 'opcache.jit_buffer_size=32M', $kiln, 'serve', $root,
            '--listen=127.0.0.1:0', '--tier=sequential', '--workers=1']);
        try {
            self::assertSame('77M|32M|1', HttpClient::get($server->baseUrl() . '/ini.php')['body']);
        } finally {
            $server->stop();
            unlink($root . '/public/ini.php');
            rmdir($root . '/public');
            rmdir($root);
        }
    }

    /**
     * The workers' memory_limit (1G: 4 × --max-memory, Debian's CLI configures none) is given on the relaunched
     * PHP's command line: set at run time instead, it left one setting away from its startup value in every
     * worker, and the sequential tier fell back to comparing every setting after each request. PHP is started
     * again for it alone when Kiln does not turn the JIT on: with --jit=off, or an opcache the user configured.
     *
     * @param list<string> $php
     * @param list<string> $options
     */
    #[DataProvider('launches')]
    public function testTheWorkersMemoryLimitIsAStartupValueSoTheSequentialTierResetsSettingsNatively(array $php, array $options): void
    {
        self::assertTrue(\extension_loaded('Zend OPcache'), 'opcache is missing: scripts/install-deps.sh installs php8.2-opcache');
        $root = PeerProcess::tempDir('kiln-jit-ini');
        file_put_contents("$root/ini.php", '<?php $changed = []; foreach (ini_get_all(null, true) as $name => $entry) { '
            . 'if ($entry["global_value"] !== $entry["local_value"]) { $changed[] = $name; } } echo ini_get("memory_limit"), "|", implode(",", $changed);');
        $server = KilnProcess::launch([PHP_BINARY, ...$php, \dirname(__DIR__, 3) . '/bin/kiln', 'serve', $root, '--listen=127.0.0.1:0',
            '--tier=sequential', '--workers=1', ...$options]);
        try {
            self::assertSame('1G|', HttpClient::get($server->baseUrl() . '/ini.php')['body'], 'no setting changed at run time');
            self::assertStringNotContainsString('native ini reset is not available', $server->log());
        } finally {
            $server->stop();
            PeerProcess::removeDir($root);
        }
    }

    /** @return array<string, array{list<string>, list<string>}> */
    public static function launches(): array
    {
        return [
            'with the JIT' => [[], []],
            'with --jit=off' => [[], ['--jit=off']],
            'with opcache configured for the CLI' => [['-d', 'opcache.enable_cli=1'], []],
        ];
    }

    public function testJitOffLeavesPhpAsItWasStarted(): void
    {
        $server = KilnProcess::start(\dirname(__DIR__, 2) . '/Fixtures/http/app.php', ['--workers=1', '--jit=off']);
        try {
            self::assertSame('{"jit":false}', HttpClient::get($server->baseUrl() . '/jit')['body']);
        } finally {
            $server->stop();
        }
    }

    /** In development the workers keep opcache (and its revalidation) but run no JIT (docs/development.md). */
    public function testDevRunsTheWorkersWithOpcacheAndWithoutTheJit(): void
    {
        $server = KilnProcess::start(\dirname(__DIR__, 2) . '/Fixtures/http/app.php', ['--workers=1', '--dev']);
        try {
            self::assertSame('{"jit":false}', HttpClient::get($server->baseUrl() . '/jit')['body']);
            self::assertSame('{"opcache":true}', HttpClient::get($server->baseUrl() . '/opcache')['body']);
        } finally {
            $server->stop();
        }
        $server = KilnProcess::start(\dirname(__DIR__, 2) . '/Fixtures/http/app.php', ['--workers=1', '--dev', '--jit=on']);
        try {
            self::assertSame('{"jit":true}', HttpClient::get($server->baseUrl() . '/jit')['body'], 'an explicit --jit=on wins');
        } finally {
            $server->stop();
        }
    }

    public function testABadJitValueIsAUsageError(): void
    {
        [$code, , $stderr] = KilnProcess::run(['serve', \dirname(__DIR__, 2) . '/Fixtures/http/app.php', '--jit=maybe'], 10.0);
        self::assertSame(2, $code);
        self::assertStringContainsString('--jit must be on or off', $stderr);
    }
}
