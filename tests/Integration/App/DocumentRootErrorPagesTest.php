<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\App;

use Kiln\Tests\Support\HttpClient;
use Kiln\Tests\Support\KilnProcess;
use Kiln\Tests\Support\PeerProcess;
use Kiln\Tests\Support\RawClient;
use PHPUnit\Framework\TestCase;

/**
 * The pages Kiln makes itself for a document root (404, 403, a backend's 502) come in the form the
 * request's Accept asks for, as the App layer's do: HTML for a browser, JSON for an API client, else
 * text. And the access log has each request's line once its response has ended.
 */
final class DocumentRootErrorPagesTest extends TestCase
{
    private const BROWSER = 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8';

    public function testKilnsOwnRefusalsAreHtmlForABrowserJsonForAnApiClientAndTextOtherwise(): void
    {
        $root = PeerProcess::tempDir('kiln-error-pages');
        $server = null;
        try {
            mkdir("$root/empty");
            file_put_contents("$root/hello.php", '<?php echo "hello";');
            $server = KilnProcess::start($root, ['--workers=1', '--tier=sequential', '--front-controller=none']);
            $base = $server->baseUrl();
            foreach (['/missing.html' => 404, '/empty/' => 403] as $path => $status) {
                $html = HttpClient::get($base . $path, ['Accept' => self::BROWSER], 10.0);
                self::assertSame($status, $html['status'], $path);
                self::assertStringStartsWith('text/html', $html['headers']['content-type'] ?? '', $path);
                self::assertStringStartsWith('<!DOCTYPE html>', $html['body'], $path);
                self::assertStringContainsString("<title>$status ", $html['body'], $path);
                $json = HttpClient::get($base . $path, ['Accept' => 'application/json'], 10.0);
                self::assertSame('application/json', $json['headers']['content-type'] ?? '', $path);
                $decoded = json_decode($json['body'], true);
                self::assertIsArray($decoded, $path);
                self::assertSame(['status' => $status, 'message' => $status === 404 ? 'Not Found' : 'Forbidden'], $decoded['error'] ?? null, $path);
                $text = HttpClient::get($base . $path, ['Accept' => '*/*'], 10.0);
                self::assertStringStartsWith('text/plain', $text['headers']['content-type'] ?? '', $path);
                self::assertStringStartsWith((string) $status, $text['body'], $path);
            }
            self::assertSame('hello', HttpClient::get("$base/hello.php", ['Accept' => self::BROWSER], 10.0)['body'], 'a script answers as it likes');
        } finally {
            $server?->stop();
            PeerProcess::removeDir($root);
        }
    }

    public function testAnAccessLogLineIsWrittenWhenItsResponseEndsNotOnALaterTick(): void
    {
        $root = PeerProcess::tempDir('kiln-access-now');
        $log = "$root/access.log";
        $server = null;
        try {
            mkdir("$root/public");
            file_put_contents("$root/public/one.txt", "one\n");
            file_put_contents("$root/public/two.txt", "two\n");
            $server = KilnProcess::start($root, ['--workers=1', "--access-log=$log"]);
            $client = RawClient::to($server);
            $client->send("GET /one.txt HTTP/1.1\r\nHost: x\r\n\r\n");
            self::assertNotNull($client->readResponse(10.0));
            // The worker reads the next request on the same connection only after it ended the first response:
            // by then the first line must be in the file (it used to wait for the next one-second tick).
            $client->send("GET /two.txt HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
            self::assertNotNull($client->readResponse(10.0));
            $client->close();
            self::assertStringContainsString('"GET /one.txt HTTP/1.1" 200 4 ', (string) file_get_contents($log));
        } finally {
            $server?->stop();
            PeerProcess::removeDir($root);
        }
    }
}
