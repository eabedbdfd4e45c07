<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Sequential;

use Kiln\Tests\Support\HttpClient;
use Kiln\Tests\Support\KilnProcess;
use Kiln\Tests\Support\RawClient;
use PHPUnit\Framework\TestCase;

/**
 * Settings PHP takes only at start-up cannot be applied per request on the sequential tier. Those that only shape a
 * script's request (post_max_size, upload_max_filesize…) are given to the workers' PHP as it starts; the others,
 * asked for with --php-ini, make the worker say to give them to PHP itself, until PHP is started with that value.
 */
final class StartupSettingsTest extends TestCase
{
    private const KILN = __DIR__ . '/../../../bin/kiln';
    private const PUBLIC = __DIR__ . '/../../Fixtures/sequential/public';

    public function testAFormLimitGivenWithPhpIniIsTheOneScriptsRunUnder(): void
    {
        [$seen, $log] = $this->serve([], 'post_max_size=16M');
        self::assertSame('16M', $seen);
        self::assertStringNotContainsString('post_max_size', $log, 'applied, not refused');
    }

    public function testAnUploadOverUploadMaxFilesizeGivenWithPhpIniArrivesWithError1(): void
    {
        $server = KilnProcess::launch([PHP_BINARY, self::KILN, 'serve', self::PUBLIC, '--listen=127.0.0.1:0', '--workers=1',
            '--tier=sequential', '--php-ini=upload_max_filesize=1K']);
        try {
            $boundary = 'kiln-startup-ini';
            $body = "--$boundary\r\nContent-Disposition: form-data; name=\"doc\"; filename=\"a.bin\"\r\n"
                . "Content-Type: application/octet-stream\r\n\r\n" . str_repeat('x', 4096) . "\r\n--$boundary--\r\n";
            $client = RawClient::to($server);
            $client->send("POST /upload.php HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=$boundary\r\n"
                . 'Content-Length: ' . \strlen($body) . "\r\n\r\n$body");
            $response = $client->readResponse(10.0);
            $client->close();
            self::assertNotNull($response, $server->log());
            self::assertSame(200, $response['status'], $server->log());
            $result = json_decode($response['body'], true);
            self::assertIsArray($result, $response['body']);
            self::assertSame(UPLOAD_ERR_INI_SIZE, $result['file']['error'] ?? null, $response['body']);
            self::assertSame(0, $result['file']['size'] ?? null);
        } finally {
            $server->stop();
        }
    }

    public function testTheWorkersRunTheFunctionJitUnlessPhpIniNamesAMode(): void
    {
        $server = KilnProcess::launch([PHP_BINARY, self::KILN, 'serve', self::PUBLIC, '--listen=127.0.0.1:0', '--workers=1', '--tier=sequential']);
        try {
            $response = HttpClient::get($server->baseUrl() . '/setting.php?name=opcache.jit');
            self::assertSame(200, $response['status'], $server->log());
            self::assertSame('function', $response['body'], 'the tracing JIT crashed workers that shared its traces');
        } finally {
            $server->stop();
        }
        [$seen] = $this->serve([], 'opcache.jit=tracing');
        self::assertSame('tracing', $seen, 'a mode the user names wins');
    }

    public function testAStartupSettingOfPhpItselfIsReportedOnlyWhilePhpRunsWithAnotherValue(): void
    {
        [$seen, $log] = $this->serve([], 'user_ini.filename=.kiln.ini');
        self::assertSame('.user.ini', $seen, "PHP's default");
        self::assertStringContainsString('--php-ini user_ini.filename cannot be changed at run time', $log);
        [$seen, $log] = $this->serve(['-d', 'user_ini.filename=.kiln.ini'], 'user_ini.filename=.kiln.ini');
        self::assertSame('.kiln.ini', $seen);
        self::assertStringNotContainsString('user_ini.filename', $log, 'PHP runs with the asked value already');
    }

    /**
     * @param list<string> $php options for PHP itself
     * @return array{string, string} the value a script sees, the server's log
     */
    private function serve(array $php, string $setting): array
    {
        $server = KilnProcess::launch([PHP_BINARY, ...$php, self::KILN, 'serve', self::PUBLIC, '--listen=127.0.0.1:0', '--workers=1',
            '--tier=sequential', "--php-ini=$setting"]);
        try {
            $response = HttpClient::get($server->baseUrl() . '/setting.php?name=' . strstr($setting, '=', true));
            self::assertSame(200, $response['status'], $server->log());
            return [$response['body'], $server->log()];
        } finally {
            $server->stop();
        }
    }
}
