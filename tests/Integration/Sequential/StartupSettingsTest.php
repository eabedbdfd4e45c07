<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Sequential;

use Kiln\Tests\Support\HttpClient;
use Kiln\Tests\Support\KilnProcess;
use PHPUnit\Framework\TestCase;

/**
 * Settings PHP takes only at start-up (post_max_size, upload_max_filesize, ...) cannot be applied per request on
 * the sequential tier: asked for with --php-ini or php_value, the worker says to give them to PHP itself. Once PHP
 * is started with that value (php -d, php.ini), the advice was followed: no warning.
 */
final class StartupSettingsTest extends TestCase
{
    private const KILN = __DIR__ . '/../../../bin/kiln';
    private const PUBLIC = __DIR__ . '/../../Fixtures/sequential/public';

    public function testAStartupSettingIsReportedOnlyWhilePhpRunsWithAnotherValue(): void
    {
        [$seen, $log] = $this->serve([]);
        self::assertSame('8M', $seen, "PHP's default");
        self::assertStringContainsString('--php-ini post_max_size cannot be changed at run time', $log);
        [$seen, $log] = $this->serve(['-d', 'post_max_size=16M']);
        self::assertSame('16M', $seen);
        self::assertStringNotContainsString('post_max_size', $log, 'PHP runs with the asked value already');
    }

    /**
     * @param list<string> $php options for PHP itself
     * @return array{string, string} the value a script sees, the server's log
     */
    private function serve(array $php): array
    {
        $server = KilnProcess::launch([PHP_BINARY, ...$php, self::KILN, 'serve', self::PUBLIC, '--listen=127.0.0.1:0', '--workers=1',
            '--tier=sequential', '--php-ini=post_max_size=16M']);
        try {
            $response = HttpClient::get($server->baseUrl() . '/setting.php?name=post_max_size');
            self::assertSame(200, $response['status'], $server->log());
            return [$response['body'], $server->log()];
        } finally {
            $server->stop();
        }
    }
}
