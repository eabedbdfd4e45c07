<?php

declare(strict_types=1);

namespace Kiln\Tests\Conformance\DocumentRoot;

use Kiln\Kiln;
use Kiln\Tests\Support\KilnProcess;
use Kiln\Tests\Support\RawClient;
use Kiln\Tests\Unit\Site\SiteTree;
use PHPUnit\Framework\TestCase;

/**
 * A document root on a real socket: PATH_INFO, extensionless scripts, index files, the front-controller
 * fallback and directory redirects, with the CGI params a tier would get. Scripts are described, not run
 * (tests/Fixtures/docroot-echo/app.php), so no PHP tier is needed.
 */
final class PathRoutingTest extends TestCase
{
    private const APP = __DIR__ . '/../../Fixtures/docroot-echo/app.php';

    private static string $base = '';

    private static ?KilnProcess $server = null;

    public static function setUpBeforeClass(): void
    {
        self::$base = SiteTree::create();
        self::$server = KilnProcess::start(self::APP, ['--workers=1'], ['DOCROOT_ECHO_ROOT' => self::$base . '/root']);
    }

    public static function tearDownAfterClass(): void
    {
        self::$server?->stop();
        self::$server = null;
        SiteTree::remove(self::$base);
    }

    public function testPathInfoIsSplitFromTheScriptName(): void
    {
        $script = $this->script('/index.php/foo/a%20b/?x=1');
        self::assertSame('/index.php', $script['scriptName']);
        self::assertSame('/foo/a b/', $script['pathInfo']);
        self::assertSame(self::$base . '/root/index.php', $script['filename']);
        $params = $script['params'];
        self::assertSame('/index.php/foo/a%20b/?x=1', $params['REQUEST_URI']);
        self::assertSame('/index.php', $params['DOCUMENT_URI']);
        self::assertSame(self::$base . '/root/foo/a b/', $params['PATH_TRANSLATED']);
        self::assertSame('x=1', $params['QUERY_STRING']);
        self::assertSame((string) $this->server()->port(), $params['SERVER_PORT']);
        self::assertSame('127.0.0.1', $params['REMOTE_ADDR']);
        self::assertSame('Kiln/' . Kiln::VERSION, $params['SERVER_SOFTWARE']);
        self::assertSame('GET', $params['REQUEST_METHOD']);
    }

    public function testAScriptDeeperInTheTreeTakesPathInfoToo(): void
    {
        $script = $this->script('/a/b.php/x');
        self::assertSame(['/a/b.php', '/x'], [$script['scriptName'], $script['pathInfo']]);
    }

    public function testScriptsAreReachedWithoutTheirExtension(): void
    {
        $script = $this->script('/page?y=2');
        self::assertSame('/page.php', $script['scriptName']);
        self::assertSame('', $script['pathInfo']);
        self::assertSame('/page?y=2', $script['params']['REQUEST_URI']);
        self::assertSame('/blog/post.php', $this->script('/blog/post')['scriptName']);
    }

    public function testADirectoryServesItsIndexPhpThenItsIndexHtml(): void
    {
        self::assertSame('/index.php', $this->script('/')['scriptName']);
        self::assertSame('/blog/index.php', $this->script('/blog/')['scriptName']);
        self::assertSame('/both-index/index.php', $this->script('/both-index/')['scriptName']);
        $docs = $this->get('/docs/');
        self::assertSame(200, $docs['status']);
        self::assertSame("<h1>docs</h1>\n", $docs['body']);
        self::assertStringStartsWith('text/html', $docs['headers']['content-type'][0] ?? '');
    }

    public function testWhatNoFileMatchesGoesToTheFrontController(): void
    {
        $script = $this->script('/2024/05/hello-world/?utm=x');
        self::assertSame('/index.php', $script['scriptName']);
        self::assertSame('', $script['pathInfo']);
        self::assertSame('/2024/05/hello-world/?utm=x', $script['params']['REQUEST_URI']);
        self::assertSame('/index.php', $script['params']['DOCUMENT_URI']);
        self::assertSame('/index.php', $this->script('/missing.php')['scriptName']);
    }

    public function testADirectoryWithoutItsSlashIsRedirectedKeepingTheQuery(): void
    {
        $response = $this->get('/blog?p=1&q=a%20b');
        self::assertSame(301, $response['status']);
        self::assertSame(['/blog/?p=1&q=a%20b'], $response['headers']['location'] ?? []);
        $head = $this->get('/docs', 'HEAD');
        self::assertSame(301, $head['status']);
        self::assertSame('', $head['body']);
    }

    public function testStaticFilesAndInRootSymlinksAreServed(): void
    {
        $css = $this->get('/style.css');
        self::assertSame(200, $css['status']);
        self::assertSame("body { color: red }\n", $css['body']);
        self::assertStringStartsWith('text/css', $css['headers']['content-type'][0] ?? '');
        self::assertSame("body { color: red }\n", $this->get('/link-in.txt')['body']);
        $linked = $this->script('/link-dir-in/post.php');
        self::assertSame('/link-dir-in/post.php', $linked['scriptName']);
        // As Apache and nginx's $document_root$fastcgi_script_name: the path as requested, not the link's target.
        self::assertSame(self::$base . '/root/link-dir-in/post.php', $linked['filename']);
    }

    public function testHiddenSourceAndEscapingPathsAreRefusedOnOneConnection(): void
    {
        $client = RawClient::to($this->server());
        $cases = ['/.env' => 404, '/config.inc' => 403, '/backup.php~' => 403, '/link-out.txt' => 404,
            '/link-dir-out/x.php' => 404, '/%2e%2e/secret.txt' => 400, '/a%2fb' => 400, '/empty/' => 403, '/style.css' => 200];
        foreach ($cases as $path => $status) {
            $client->send("GET $path HTTP/1.1\r\nHost: x\r\n\r\n");
            $response = $client->readResponse();
            self::assertNotNull($response, $path);
            self::assertSame($status, $response['status'], $path);
            self::assertStringNotContainsString('hunter2', $response['body']);
            self::assertStringNotContainsString(SiteTree::SECRET, $response['body']);
        }
        $client->close();
    }

    public function testTheFrontControllerCanBeTurnedOff(): void
    {
        $server = KilnProcess::start(self::APP, ['--workers=1'], ['DOCROOT_ECHO_ROOT' => self::$base . '/root', 'DOCROOT_ECHO_FRONT' => 'off']);
        $client = RawClient::to($server);
        $client->send("GET /missing HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        self::assertSame(404, $client->readResponse()['status'] ?? null);
        $server->stop();
    }

    /** @return array{filename: string, scriptName: string, pathInfo: string, documentRoot: string, params: array<string, string>} */
    private function script(string $target): array
    {
        $response = $this->get($target);
        self::assertSame(200, $response['status'], $target . ': ' . $response['body']);
        /** @var array{filename: string, scriptName: string, pathInfo: string, documentRoot: string, params: array<string, string>} $script */
        $script = json_decode($response['body'], true, flags: JSON_THROW_ON_ERROR);
        self::assertSame(self::$base . '/root', $script['documentRoot']);
        return $script;
    }

    /** @return array{status: int, reason: string, headers: array<string, list<string>>, body: string, raw: string} */
    private function get(string $target, string $method = 'GET'): array
    {
        $client = RawClient::to($this->server());
        $port = $this->server()->port();
        $client->send("$method $target HTTP/1.1\r\nHost: 127.0.0.1:$port\r\nConnection: close\r\n\r\n");
        $response = $client->readResponse(5.0, $method === 'HEAD');
        $client->close();
        self::assertNotNull($response);
        return $response;
    }

    private function server(): KilnProcess
    {
        self::assertNotNull(self::$server);
        return self::$server;
    }
}
