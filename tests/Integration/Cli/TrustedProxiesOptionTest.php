<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Cli;

use Kiln\Tests\Support\KilnProcess;
use Kiln\Tests\Support\RawClient;
use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;

/**
 * `kiln serve DIR --trusted-proxies=…` on a real socket, behind a TLS-terminating proxy on 127.0.0.1: a
 * script sees HTTPS=on, the client's address and the port it reached at the proxy, as php-fpm behind nginx
 * with `fastcgi_param HTTPS`; without the option, or from a peer not trusted, the forwarded headers count
 * for nothing. Through the sequential tier (`$_SERVER` built in the worker) and the isolated one (php-cgi's
 * FastCGI params).
 */
final class TrustedProxiesOptionTest extends TestCase
{
    private const FORWARDED = ['X-Forwarded-For' => '203.0.113.7', 'X-Forwarded-Proto' => 'https'];

    private string $root;

    private ?KilnProcess $server = null;

    protected function setUp(): void
    {
        $this->root = sys_get_temp_dir() . '/kiln-trusted-proxies-' . getmypid() . '-' . bin2hex(random_bytes(3));
        mkdir($this->root, 0755, true);
        file_put_contents("$this->root/env.php", <<<'PHP'
            <?php
            echo ($_SERVER['HTTPS'] ?? ''), '|', $_SERVER['REMOTE_ADDR'], '|', $_SERVER['SERVER_PORT'], '|', $_SERVER['REQUEST_SCHEME'];
            PHP);
    }

    protected function tearDown(): void
    {
        $this->server?->stop();
        $this->server = null;
        @unlink("$this->root/env.php");
        @rmdir($this->root);
    }

    /** @return iterable<string, array{string}> */
    public static function tiers(): iterable
    {
        yield 'sequential' => ['sequential'];
        yield 'isolated' => ['isolated'];
    }

    #[DataProvider('tiers')]
    public function testATrustedProxysForwardedProtoTurnsHttpsOn(string $tier): void
    {
        $this->serve($tier, ['--trusted-proxies=10.0.0.0/8,127.0.0.1']);
        self::assertSame('on|203.0.113.7|443|https', $this->env(self::FORWARDED));
        self::assertSame('on|127.0.0.1|443|https', $this->env(['X-Forwarded-Proto' => 'https']), 'the proxy names no client');
        self::assertSame('on|203.0.113.7|443|https', $this->env(self::FORWARDED, '127.0.0.1:8080'), "never the Host's port (the proxy's upstream)");
        self::assertSame('on|203.0.113.7|8443|https', $this->env([...self::FORWARDED, 'X-Forwarded-Host' => 'shop.example:8443']), "the forwarded host's port");
        self::assertSame('on|203.0.113.7|9443|https', $this->env(self::FORWARDED + ['X-Forwarded-Host' => 'shop.example:9443'], 'backend:8080'));
        self::assertSame("|203.0.113.7|{$this->server?->port()}|http", $this->env(['X-Forwarded-For' => '203.0.113.7']), 'a proxy that names only the client: the port stays the one Kiln listens on');
        self::assertSame("|127.0.0.1|{$this->port()}|http", $this->env(), 'the proxy itself, forwarding nothing');
    }

    #[DataProvider('tiers')]
    public function testWithoutTheOptionForwardedHeadersCountForNothing(string $tier): void
    {
        $this->serve($tier);
        self::assertSame("|127.0.0.1|{$this->port()}|http", $this->env(self::FORWARDED));
    }

    #[DataProvider('tiers')]
    public function testAPeerThatIsNotTrustedCannotClaimHttps(string $tier): void
    {
        $this->serve($tier, ['--trusted-proxies=10.0.0.0/8']);
        self::assertSame("|127.0.0.1|{$this->port()}|http", $this->env(self::FORWARDED));
    }

    public function testABadAddressStopsStartUpWithItsReason(): void
    {
        [$code, , $stderr] = KilnProcess::run(['serve', $this->root, '--listen=127.0.0.1:0', '--trusted-proxies=127.0.0.1,proxy.local']);
        self::assertSame(2, $code);
        self::assertStringContainsString("kiln: --trusted-proxies: Expected an IP address or a CIDR like '10.0.0.0/8' or '2001:db8::/32', got 'proxy.local'", $stderr);
    }

    /** @param list<string> $args */
    private function serve(string $tier, array $args = []): void
    {
        if ($tier === 'isolated') {
            self::assertTrue(self::hasPhpCgi(), 'php-cgi is missing: scripts/install-deps.sh installs it');
        }
        $this->server = KilnProcess::start($this->root, ['--workers=1', "--tier=$tier", ...$args]);
    }

    /**
     * GET /env.php as the proxy sends it: the Host of the client's request (nginx's `proxy_set_header Host $host`).
     *
     * @param array<string, string> $headers
     */
    private function env(array $headers = [], string $host = 'shop.example'): string
    {
        \assert($this->server !== null);
        $client = RawClient::to($this->server);
        $head = "GET /env.php HTTP/1.1\r\nHost: $host\r\nConnection: close\r\n";
        foreach ($headers as $name => $value) {
            $head .= "$name: $value\r\n";
        }
        $client->send("$head\r\n");
        $response = $client->readResponse();
        $client->close();
        self::assertNotNull($response, "no response; log:\n" . $this->server->log());
        self::assertSame(200, $response['status'], $response['body']);
        return $response['body'];
    }

    private function port(): int
    {
        \assert($this->server !== null);
        return $this->server->port();
    }

    private static function hasPhpCgi(): bool
    {
        foreach (explode(':', (string) getenv('PATH')) as $dir) {
            if ($dir !== '' && (is_executable("$dir/php-cgi") || is_executable("$dir/php-cgi" . PHP_MAJOR_VERSION . '.' . PHP_MINOR_VERSION))) {
                return true;
            }
        }
        return false;
    }
}
