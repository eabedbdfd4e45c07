<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Cli;

use Kiln\Tests\Support\HttpClient;
use Kiln\Tests\Support\KilnProcess;
use Kiln\Tests\Support\PhpExtensions;
use PHPUnit\Framework\TestCase;

/**
 * The sequential tier needs ext-ffi. Whenever a site gives it any script (`--tier=sequential`, or an app's
 * site() for a path prefix) and FFI is missing, `kiln serve` refuses to start, saying why, instead of
 * starting and answering each such script with a 500.
 *
 * PHP runs without FFI here through `-n`: no php.ini, so no shared extension at all; the ones Kiln needs
 * (pcntl, posix; tokenizer for the sequential tier, ctype for the fork tier) are loaded again by name, from
 * this PHP's extension_dir, when they are not built in. With `-n` opcache is not loaded either, so
 * `kiln serve` does not re-execute PHP with the JIT (which would read php.ini, and load FFI, again);
 * `--jit=off` makes sure of it. `zend.assertions` keeps this PHP's value (php.ini's -1 here, where `-n`
 * would turn assertions on). The control run is the same command with `-d extension=ffi` added.
 */
final class SequentialTierWithoutFfiTest extends TestCase
{
    private const KILN = __DIR__ . '/../../../bin/kiln';
    private const APP = __DIR__ . '/../../Fixtures/sequential-prefix/app.php';
    private const ROOT = __DIR__ . '/../../Fixtures/sequential-prefix/public';
    private const REASON = 'the sequential tier needs the FFI extension';

    public function testTierSequentialForADocumentRootRefusesToStartWithoutFfi(): void
    {
        [$code, , $stderr] = KilnProcess::run(['serve', self::ROOT, '--tier=sequential', ...self::serveOptions()], php: self::phpWithoutFfi());

        self::assertSame(1, $code, $stderr);
        self::assertStringContainsString(self::REASON, $stderr);
        self::assertStringNotContainsString('ready:', $stderr);
    }

    public function testAnAppRoutingAPrefixToTheSequentialTierRefusesToStartWithoutFfi(): void
    {
        [$code, , $stderr] = KilnProcess::run(['serve', self::APP, ...self::serveOptions()], php: self::phpWithoutFfi());

        self::assertSame(1, $code, $stderr);
        self::assertStringContainsString("cannot run the site's scripts under /seq/ on the sequential tier: " . self::REASON, $stderr);
        self::assertStringNotContainsString('ready:', $stderr);
    }

    /** The same PHP and app with FFI loaded: the check refuses nothing it should not. */
    public function testTheSameAppStartsAndServesThePrefixWithFfi(): void
    {
        $php = [...self::phpWithoutFfi(), '-d', 'extension=ffi'];
        $server = KilnProcess::launch([PHP_BINARY, ...$php, self::KILN, 'serve', self::APP, ...self::serveOptions()]);
        try {
            $response = HttpClient::get($server->baseUrl() . '/seq/');
            self::assertSame(200, $response['status']);
            self::assertSame('sequential', $response['body']);
            self::assertSame('sequential', $response['headers']['x-tier'] ?? null); // header() kept, through FFI
        } finally {
            $server->stop();
        }
    }

    /** @return list<string> */
    private static function serveOptions(): array
    {
        return ['--listen=127.0.0.1:0', '--workers=1', '--jit=off'];
    }

    /** @return list<string> PHP's own options for a PHP without FFI (the test is skipped when FFI is built in) */
    private static function phpWithoutFfi(): array
    {
        // -n also drops php.ini's settings: keep the ones that change how Kiln runs as they are in this PHP.
        $php = ['-n', '-d', 'extension_dir=' . \ini_get('extension_dir'), '-d', 'zend.assertions=' . \ini_get('zend.assertions')];
        $builtIn = PhpExtensions::loaded($php);
        if (\in_array('ffi', $builtIn, true)) {
            self::markTestSkipped('FFI is built into this PHP: -n cannot leave it out');
        }
        $needed = ['ctype', 'pcntl', 'posix', 'tokenizer'];
        foreach ($needed as $extension) {
            if (!\in_array($extension, $builtIn, true)) {
                array_push($php, '-d', "extension=$extension");
            }
        }
        $loaded = PhpExtensions::loaded($php);
        foreach ($needed as $extension) {
            self::assertContains($extension, $loaded, "PHP without php.ini cannot load $extension from " . \ini_get('extension_dir'));
        }
        self::assertNotContains('ffi', $loaded);
        return $php;
    }
}
