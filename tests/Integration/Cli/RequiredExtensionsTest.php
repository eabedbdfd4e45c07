<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Cli;

use Kiln\Tests\Support\KilnProcess;
use Kiln\Tests\Support\PhpExtensions;
use PHPUnit\Framework\TestCase;

/**
 * `kiln serve` on a PHP without an extension it needs stops at once and names it, rather than failing later
 * inside a worker. PHP runs with `-n` (no php.ini, so no shared extension) plus only pcntl and posix: ctype
 * and tokenizer, which Debian ships as shared modules, are then missing.
 */
final class RequiredExtensionsTest extends TestCase
{
    public function testServeOnAPhpWithoutCtypeAndTokenizerNamesThemAndStartsNothing(): void
    {
        $php = ['-n', '-d', 'extension_dir=' . \ini_get('extension_dir'), '-d', 'zend.assertions=' . \ini_get('zend.assertions')];
        $loaded = PhpExtensions::loaded($php);
        foreach (['pcntl', 'posix'] as $extension) {
            if (!\in_array($extension, $loaded, true)) {
                array_push($php, '-d', "extension=$extension");
            }
        }
        $loaded = PhpExtensions::loaded($php);
        if (\in_array('ctype', $loaded, true) || \in_array('tokenizer', $loaded, true)) {
            self::markTestSkipped('ctype or tokenizer is built into this PHP: -n cannot leave it out');
        }
        [$code, , $stderr] = KilnProcess::run(['serve', __DIR__ . '/../../Fixtures/sequential/public', '--listen=127.0.0.1:0', '--jit=off'], php: $php);

        self::assertSame(1, $code, $stderr);
        self::assertStringContainsString('lacks the extensions ctype, tokenizer, which Kiln needs', $stderr);
        self::assertStringNotContainsString('ready:', $stderr);
    }
}
