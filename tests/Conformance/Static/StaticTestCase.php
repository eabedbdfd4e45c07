<?php

declare(strict_types=1);

namespace Kiln\Tests\Conformance\Static;

use Kiln\Tests\Support\KilnProcess;
use Kiln\Tests\Support\RawClient;
use PHPUnit\Framework\TestCase;

/**
 * One `kiln serve DIR/app.php` (one worker) per test class over a fresh StaticSite; the script returns the
 * StaticFiles handler for DIR/root, alone (the document-root layer with PHP tiers has its own tests).
 * Requests are raw bytes on real sockets, one connection each.
 */
abstract class StaticTestCase extends TestCase
{
    /** The app script's body: returns the handler under test; $root is the document root. */
    protected static function appCode(): string
    {
        return 'return new \\Kiln\\Http\\StaticFiles($root);';
    }

    protected static ?StaticSite $site = null;

    protected static ?KilnProcess $server = null;

    /** Whether the files are served as `kiln serve DIR` serves a document root, not by appCode()'s handler. */
    protected static function throughDocumentRoot(): bool
    {
        return false;
    }

    public static function setUpBeforeClass(): void
    {
        static::$site = StaticSite::create();
        if (static::throughDocumentRoot()) {
            static::$server = KilnProcess::start(static::$site->dir . '/root', ['--workers=1', '--tier=sequential']);
            return;
        }
        $script = static::$site->dir . '/app.php';
        file_put_contents($script, "<?php\n\ndeclare(strict_types=1);\n\n\$root = __DIR__ . '/root';\n" . static::appCode() . "\n");
        static::$server = KilnProcess::start($script, ['--workers=1']);
    }

    public static function tearDownAfterClass(): void
    {
        static::$server?->stop();
        static::$server = null;
        static::$site?->remove();
        static::$site = null;
    }

    protected static function site(): StaticSite
    {
        self::assertNotNull(static::$site);
        return static::$site;
    }

    protected static function server(): KilnProcess
    {
        self::assertNotNull(static::$server);
        return static::$server;
    }

    /**
     * @param array<string, string> $headers
     * @return array{status: int, reason: string, headers: array<string, list<string>>, body: string, raw: string}
     */
    protected static function request(string $method, string $target, array $headers = [], string $version = '1.1'): array
    {
        $request = "$method $target HTTP/$version\r\nHost: localhost\r\nConnection: close\r\n";
        foreach ($headers as $name => $value) {
            $request .= "$name: $value\r\n";
        }
        $client = RawClient::to(static::server());
        try {
            $client->send($request . "\r\n");
            $response = $client->readResponse(10.0, $method === 'HEAD');
        } finally {
            $client->close();
        }
        self::assertNotNull($response, "no response to $method $target");
        return $response;
    }

    /**
     * @param array<string, string> $headers
     * @return array{status: int, reason: string, headers: array<string, list<string>>, body: string, raw: string}
     */
    protected static function get(string $target, array $headers = []): array
    {
        return static::request('GET', $target, $headers);
    }

    /** @param array{headers: array<string, list<string>>} $response */
    protected static function header(array $response, string $name): ?string
    {
        return $response['headers'][strtolower($name)][0] ?? null;
    }
}
