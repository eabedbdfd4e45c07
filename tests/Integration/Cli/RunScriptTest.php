<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Cli;

use Kiln\Tests\Support\HttpClient;
use Kiln\Tests\Support\KilnProcess;
use PHPUnit\Framework\TestCase;

/** `php app.php` with `$app->run()` serves like `kiln serve app.php`, settings from argv or KILN_* env. */
final class RunScriptTest extends TestCase
{
    private const SCRIPT = __DIR__ . '/../../Fixtures/run/app.php';

    public function testPhpAppScriptServesWithCommandLineOptions(): void
    {
        $server = KilnProcess::launch([PHP_BINARY, self::SCRIPT, '--listen=127.0.0.1:0', '--workers=1']);
        try {
            self::assertSame('Hello from run()', HttpClient::get($server->baseUrl() . '/hello')['body']);
            self::assertCount(1, $server->workerPids());
        } finally {
            $server->stop();
        }
    }

    public function testSettingsComeFromTheEnvironment(): void
    {
        $server = KilnProcess::launch([PHP_BINARY, self::SCRIPT], ['KILN_LISTEN' => '127.0.0.1:0', 'KILN_WORKERS' => '3']);
        try {
            self::assertSame(200, HttpClient::get($server->baseUrl() . '/hello')['status']);
            self::assertCount(3, $server->workerPids());
        } finally {
            $server->stop();
        }
    }
}
