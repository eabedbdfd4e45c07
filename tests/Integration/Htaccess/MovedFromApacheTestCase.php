<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Htaccess;

use Kiln\Tests\Support\KilnProcess;
use Kiln\Tests\Support\PeerProcess;
use Kiln\Tests\Support\RawClient;
use PHPUnit\Framework\TestCase;

/**
 * `kiln serve DOCROOT` with the implicit front controller on (the default), for what a site moved from
 * Apache relies on: an `ErrorDocument 404` gives real 404s where it applies; `AddDefaultCharset` decides the
 * charset of static text files and of a script's text type without one; a POST to a static file gets the
 * file. One server per class, for the tier a
 * subclass names.
 */
abstract class MovedFromApacheTestCase extends TestCase
{
    private static string $root = '';

    private static ?KilnProcess $server = null;

    /** `sequential`, `isolated` or `fork` */
    abstract protected static function tier(): string;

    public static function setUpBeforeClass(): void
    {
        self::$root = PeerProcess::tempDir('kiln-moved-from-apache');
        foreach (self::site() as $path => $contents) {
            @mkdir(\dirname(self::$root . "/$path"), 0o755, true);
            file_put_contents(self::$root . "/$path", $contents);
        }
        self::$server = KilnProcess::start(self::$root, ['--tier=' . static::tier(), '--workers=1', '--pool-size=1']);
    }

    public static function tearDownAfterClass(): void
    {
        self::$server?->stop();
        self::$server = null;
        PeerProcess::removeDir(self::$root);
    }

    public function testAMissingPathWhereErrorDocument404AppliesIsA404WithThatDocument(): void
    {
        foreach (['/strict/no-such-page.html', '/strict/images/missing.png', '/strict/deeper/no/where', '/strict/page.html/more'] as $target) {
            $response = $this->request('GET', $target);
            self::assertSame(404, $response['status'], $target);
            self::assertSame("custom 404 for $target", $response['body'], $target);
        }
        self::assertSame([200, "a page\n"], $this->statusAndBody('GET', '/strict/page.html'), 'what exists is served');
    }

    public function testErrorDocument404DefaultGivesKilnsOwn404(): void
    {
        $response = $this->request('GET', '/plain/missing.html');
        self::assertSame(404, $response['status']);
        self::assertStringNotContainsString('front controller', $response['body']);
    }

    public function testARuleThatRewritesToIndexPhpStillRunsItBesideAnErrorDocument(): void
    {
        self::assertSame([200, 'front controller for /routed/2024/hello'], $this->statusAndBody('GET', '/routed/2024/hello'));
    }

    public function testWithoutAnErrorDocument404TheFrontControllerTakesEveryMissingPath(): void
    {
        foreach (['/2024/hello', '/images/missing.png', '/robots.txt'] as $target) {
            self::assertSame([200, "front controller for $target"], $this->statusAndBody('GET', $target), $target);
        }
    }

    public function testAddDefaultCharsetGivesStaticTextFilesItsCharsetOrNone(): void
    {
        $types = [
            '/latin/page.html' => 'text/html; charset=ISO-8859-1',
            '/latin/note.txt' => 'text/plain; charset=ISO-8859-1',
            '/latin/style.css' => 'text/css; charset=utf-8', // not a type the directive covers
            '/on/note.txt' => 'text/plain; charset=iso-8859-1',
            '/off/page.html' => 'text/html',
            '/off/note.txt' => 'text/plain',
            '/strict/page.html' => 'text/html; charset=utf-8', // Kiln's own, without the directive
        ];
        foreach ($types as $target => $type) {
            $response = $this->request('GET', $target);
            self::assertSame(200, $response['status'], $target);
            self::assertSame([$type], $response['headers']['content-type'] ?? [], $target);
        }
    }

    public function testAddDefaultCharsetReachesAScriptsTextTypeOnlyWhenItHasNoCharset(): void
    {
        self::assertSame(['text/plain; charset=ISO-8859-1'], $this->request('GET', '/latin/plain.php')['headers']['content-type'] ?? []);
        self::assertSame(['text/html; charset=UTF-8'], $this->request('GET', '/latin/default.php')['headers']['content-type'] ?? [], 'PHP\'s default_charset');
        self::assertSame(['text/html; charset=UTF-8'], $this->request('GET', '/off/default.php')['headers']['content-type'] ?? [], 'Off takes nothing away');
    }

    public function testAPostToAStaticFileGetsTheFileAndItsBodyIsDropped(): void
    {
        $client = RawClient::to(self::server());
        try {
            $form = 'status=paid&order=' . str_repeat('7', 100_000);
            $client->send("POST /thanks.html HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/x-www-form-urlencoded\r\n"
                . 'Content-Length: ' . \strlen($form) . "\r\n\r\n$form");
            $posted = $client->readResponse(10.0);
            self::assertNotNull($posted);
            self::assertSame([200, "<p>thanks</p>\n"], [$posted['status'], $posted['body']]);
            self::assertSame(['text/html; charset=utf-8'], $posted['headers']['content-type'] ?? []);
            $client->send("GET /strict/page.html HTTP/1.1\r\nHost: localhost\r\n\r\n");
            $next = $client->readResponse(10.0);
            self::assertNotNull($next, 'the connection goes on after the body');
            self::assertSame([200, "a page\n"], [$next['status'], $next['body']]);
        } finally {
            $client->close();
        }
        self::assertSame([200, "a page\n"], $this->statusAndBody('POST', '/strict/page.html', 'a=1'), 'with .htaccess rules on the path');
        self::assertSame([200, "<p>page</p>\n"], $this->statusAndBody('POST', '/off/', 'a=1'), 'a directory\'s index.html');
        $ranged = $this->request('POST', '/thanks.html', 'a=1', ['Range' => 'bytes=0-1']);
        self::assertSame([200, "<p>thanks</p>\n"], [$ranged['status'], $ranged['body']], 'no ranges for POST');
        self::assertSame([404, 'custom 404 for /strict/missing.html'], $this->statusAndBody('POST', '/strict/missing.html', 'a=1'));
    }

    public function testOtherMethodsThanGetHeadAndPostOnAStaticFileAre405(): void
    {
        foreach (['PUT', 'DELETE', 'PATCH'] as $method) {
            $response = $this->request($method, '/thanks.html', 'x');
            self::assertSame(405, $response['status'], $method);
            self::assertSame(['GET, HEAD, POST'], $response['headers']['allow'] ?? [], $method);
        }
    }

    /**
     * @param array<string, string> $headers
     * @return array{status: int, reason: string, headers: array<string, list<string>>, body: string, raw: string}
     */
    protected function request(string $method, string $target, string $body = '', array $headers = []): array
    {
        $server = self::$server;
        self::assertNotNull($server);
        $client = RawClient::to($server);
        try {
            $head = "$method $target HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n";
            if ($body !== '' || $method === 'POST') {
                $head .= 'Content-Length: ' . \strlen($body) . "\r\n";
            }
            foreach ($headers as $name => $value) {
                $head .= "$name: $value\r\n";
            }
            $client->send("$head\r\n$body");
            $response = $client->readResponse(10.0, $method === 'HEAD');
        } finally {
            $client->close();
        }
        self::assertNotNull($response, "no response to $method $target; log:\n" . $server->log());
        return $response;
    }

    /** @return array{int, string} */
    protected function statusAndBody(string $method, string $target, string $body = ''): array
    {
        $response = $this->request($method, $target, $body);
        return [$response['status'], $response['body']];
    }

    protected static function server(): KilnProcess
    {
        self::assertNotNull(self::$server);
        return self::$server;
    }

    /** @return array<string, string> path under the root => contents */
    private static function site(): array
    {
        return [
            'index.php' => '<?php echo "front controller for ", $_SERVER["REQUEST_URI"];',
            '404.php' => '<?php echo "custom {$_SERVER["REDIRECT_STATUS"]} for {$_SERVER["REDIRECT_URL"]}";',
            'thanks.html' => "<p>thanks</p>\n",
            'off/index.html' => "<p>page</p>\n",
            'strict/.htaccess' => "ErrorDocument 404 /404.php\n",
            'strict/page.html' => "a page\n",
            'plain/.htaccess' => "ErrorDocument 404 default\n",
            'latin/.htaccess' => "AddDefaultCharset ISO-8859-1\n",
            'latin/page.html' => "<p>caf\xE9</p>\n",
            'latin/note.txt' => "caf\xE9\n",
            'latin/style.css' => "p { color: red }\n",
            'latin/plain.php' => '<?php ini_set("default_charset", ""); header("Content-Type: text/plain"); echo "x";',
            'latin/default.php' => '<?php echo "x";',
            'on/.htaccess' => "AddDefaultCharset On\n",
            'on/note.txt' => "note\n",
            'off/.htaccess' => "AddDefaultCharset Off\n",
            'off/page.html' => "<p>page</p>\n",
            'off/note.txt' => "note\n",
            'off/default.php' => '<?php echo "x";',
            'routed/.htaccess' => "ErrorDocument 404 /404.php\nRewriteEngine On\nRewriteCond %{REQUEST_FILENAME} !-f\n"
                . "RewriteCond %{REQUEST_FILENAME} !-d\nRewriteRule . /index.php [L]\n",
        ];
    }
}
