<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Peers;

use Kiln\Tests\Support\HttpClient;
use Kiln\Tests\Support\NginxProcess;
use Kiln\Tests\Support\PeerProcess;
use Kiln\Tests\Support\PhpFpmProcess;
use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;

/** The real nginx the parity tests and benchmarks compare against: static files, and PHP the usual way. */
final class NginxProcessTest extends TestCase
{
    private const ROOT = __DIR__ . '/../../Fixtures/site/public';

    public function testWithoutABackendItServesStaticFiles(): void
    {
        $nginx = NginxProcess::start(self::ROOT);
        $response = HttpClient::get($nginx->baseUrl() . '/hello.txt');
        self::assertSame(200, $response['status'], $nginx->diagnostics());
        self::assertSame("static text for the parity fixture\n", $response['body']);
        self::assertSame(404, HttpClient::get($nginx->baseUrl() . '/missing.txt')['status']);
        $nginx->stop();
    }

    /** @return array<string, array{bool, bool}> */
    public static function variants(): array
    {
        return [
            'tcp' => [false, false],
            'unix socket' => [true, false],
            'tcp, fastcgi_keep_conn + upstream keepalive' => [false, true],
        ];
    }

    #[DataProvider('variants')]
    public function testInFrontOfPhpFpmItRoutesScriptsPathInfoExtensionlessAndTheFrontController(bool $unix, bool $keepConn): void
    {
        $fpm = PhpFpmProcess::start(children: 1, tcp: !$unix, unix: $unix);
        $nginx = NginxProcess::start(self::ROOT, $fpm, keepConn: $keepConn);
        $cases = [
            '/dump.php?a=1' => ['/dump.php', null, '/dump.php?a=1'],
            '/sub/page.php/x/a%20b' => ['/sub/page.php', '/x/a b', '/sub/page.php/x/a%20b'],
            '/sub/page' => ['/sub/page.php', '', '/sub/page'],
            '/no/such/thing?q=1' => ['/index.php', '', '/no/such/thing?q=1'],
            '/' => ['/index.php', '', '/'],
        ];
        foreach ($cases as $target => [$scriptName, $pathInfo, $requestUri]) {
            for ($i = 0; $i < 2; $i++) { // twice: the second goes over a kept FastCGI connection when keepConn
                $response = HttpClient::get($nginx->baseUrl() . $target);
                self::assertSame(200, $response['status'], "$target\n" . $response['body'] . $nginx->diagnostics() . $fpm->diagnostics());
                $server = self::server($response['body']);
                self::assertSame($scriptName, $server['SCRIPT_NAME'] ?? null, $target);
                self::assertSame($pathInfo ?? '', $server['PATH_INFO'] ?? null, $target);
                self::assertSame($requestUri, $server['REQUEST_URI'] ?? null, $target);
                self::assertSame("127.0.0.1:{$nginx->port()}", $server['HTTP_HOST'] ?? null, 'the Host header reaches PHP unchanged');
                self::assertSame(realpath(self::ROOT), $server['DOCUMENT_ROOT'] ?? null);
            }
        }
        $nginx->stop();
        $fpm->stop();
    }

    public function testTheProxyRequestHeaderNeverReachesPhpAsHttpProxy(): void
    {
        $fpm = PhpFpmProcess::start(children: 1);
        $nginx = NginxProcess::start(self::ROOT, $fpm);
        $response = HttpClient::get($nginx->baseUrl() . '/dump.php', ['Proxy' => 'http://evil.example']);
        $server = self::server($response['body']);
        self::assertArrayNotHasKey('HTTP_PROXY', $server);
        $nginx->stop();
        $fpm->stop();
    }

    public function testABadConfigFailsWithNginxsOwnMessage(): void
    {
        try {
            NginxProcess::start(self::ROOT, extra: 'no_such_directive on;', timeout: 5.0);
            self::fail('nginx started with an unknown directive');
        } catch (\RuntimeException $e) {
            self::assertStringContainsString('nginx exited', $e->getMessage());
            self::assertStringContainsString('unknown directive "no_such_directive"', $e->getMessage());
        }
    }

    public function testStopEndsTheMasterAndItsWorkersAndRemovesItsTempDir(): void
    {
        $nginx = NginxProcess::start(self::ROOT, workers: 2);
        $pids = [$nginx->pid(), ...PeerProcess::descendants($nginx->pid())];
        self::assertCount(3, $pids, 'a master and two workers');
        $dir = $nginx->directory();
        $nginx->stop();
        foreach ($pids as $pid) {
            self::assertFalse(file_exists("/proc/$pid"), "nginx process $pid is still there after stop()");
        }
        self::assertDirectoryDoesNotExist($dir);
    }

    /** @return array<mixed> the $_SERVER that dump.php printed */
    private static function server(string $body): array
    {
        $json = json_decode($body, true);
        self::assertIsArray($json, $body);
        self::assertIsArray($json['server'] ?? null, $body);
        return $json['server'];
    }
}
