<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Peers;

use Kiln\Tests\Support\ApacheProcess;
use Kiln\Tests\Support\HttpClient;
use Kiln\Tests\Support\PeerProcess;
use PHPUnit\Framework\TestCase;

/** The real Apache + mod_php the benchmarks compare against runs PHP the way a PHP site is set up under Apache. */
final class ApacheProcessTest extends TestCase
{
    private const ROOT = __DIR__ . '/../../Fixtures/site/public';

    protected function setUp(): void
    {
        if (!ApacheProcess::isInstalled()) {
            self::fail('Apache with mod_php is not installed (apt-get install apache2 libapache2-mod-php8.2): scripts/install-deps.sh installs it');
        }
    }

    public function testItRunsScriptsThroughModPhpWithPathInfoExtensionlessAndTheFrontController(): void
    {
        $apache = ApacheProcess::start(self::ROOT);
        $cases = [
            '/dump.php?a=1' => ['/dump.php', null],
            '/sub/page.php/x/y' => ['/sub/page.php', '/x/y'],
            '/sub/page' => ['/sub/page.php', null],
            '/no/such/thing' => ['/index.php', null],
            '/' => ['/index.php', null],
        ];
        foreach ($cases as $target => [$scriptName, $pathInfo]) {
            $response = HttpClient::get($apache->baseUrl() . $target);
            self::assertSame(200, $response['status'], "$target\n{$response['body']}\n" . $apache->diagnostics());
            $json = json_decode($response['body'], true);
            self::assertIsArray($json, $response['body']);
            $server = $json['server'] ?? null;
            self::assertIsArray($server, $response['body']);
            self::assertSame($scriptName, $server['SCRIPT_NAME'] ?? null, $target);
            self::assertSame($pathInfo, $server['PATH_INFO'] ?? null, $target);
            self::assertIsString($server['SERVER_SOFTWARE'] ?? null);
            self::assertStringStartsWith('Apache', $server['SERVER_SOFTWARE']);
        }
        $apache->stop();
    }

    public function testStopEndsTheParentAndItsChildrenAndRemovesItsTempDir(): void
    {
        $apache = ApacheProcess::start(self::ROOT, processes: 2);
        $deadline = microtime(true) + 5.0;
        while (\count(PeerProcess::descendants($apache->pid())) < 2 && microtime(true) < $deadline) {
            usleep(20_000);
        }
        $pids = [$apache->pid(), ...PeerProcess::descendants($apache->pid())];
        self::assertGreaterThanOrEqual(3, \count($pids), 'a parent and two prefork children');
        $dir = $apache->directory();
        $apache->stop();
        foreach ($pids as $pid) {
            self::assertFalse(file_exists("/proc/$pid"), "apache2 process $pid is still there after stop()");
        }
        self::assertDirectoryDoesNotExist($dir);
    }
}
