<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Site;

use Kiln\Http\ForwardedClient;
use Kiln\Http\Limits;
use Kiln\Http\Request;
use Kiln\Http\Wire\BodyChunk;
use Kiln\Http\Wire\RequestHead;
use Kiln\Http\Wire\RequestParser;
use Kiln\Kiln;
use Kiln\Site\CgiParams;
use Kiln\Site\Script;
use PHPUnit\Framework\TestCase;

final class CgiParamsTest extends TestCase
{
    public function testAScriptWithPathInfoGetsWhatNginxGivesPhpFpm(): void
    {
        $request = self::request("POST /dump.php/a%20b/c?x=1&y=%20 HTTP/1.1\r\nHost: Example.COM:8080\r\n"
            . "Content-Type: text/plain\r\nContent-Length: 3\r\n\r\nabc");
        $params = CgiParams::build($request, new Script('/srv/www/dump.php', '/dump.php', '/a b/c', '/srv/www'));
        self::assertSame([
            'SCRIPT_FILENAME' => '/srv/www/dump.php',
            'SCRIPT_NAME' => '/dump.php',
            'PATH_INFO' => '/a b/c',
            'DOCUMENT_ROOT' => '/srv/www',
            'DOCUMENT_URI' => '/dump.php',
            'REQUEST_URI' => '/dump.php/a%20b/c?x=1&y=%20',
            'QUERY_STRING' => 'x=1&y=%20',
            'REQUEST_METHOD' => 'POST',
            'CONTENT_TYPE' => 'text/plain',
            'CONTENT_LENGTH' => '3',
            'SERVER_NAME' => 'example.com',
            'SERVER_PORT' => '8080',
            'SERVER_ADDR' => '127.0.0.2',
            'SERVER_PROTOCOL' => 'HTTP/1.1',
            'SERVER_SOFTWARE' => 'Kiln/' . Kiln::VERSION,
            'GATEWAY_INTERFACE' => 'CGI/1.1',
            'REMOTE_ADDR' => '192.0.2.7',
            'REMOTE_PORT' => '51234',
            'REQUEST_SCHEME' => 'http',
            'REDIRECT_STATUS' => '200',
            'PATH_TRANSLATED' => '/srv/www/a b/c',
            'HTTP_HOST' => 'Example.COM:8080',
            'HTTP_CONTENT_TYPE' => 'text/plain',
            'HTTP_CONTENT_LENGTH' => '3',
        ], $params);
    }

    public function testWithoutPathInfoThereIsNoPathTranslated(): void
    {
        $params = CgiParams::build(self::request("GET /index.php HTTP/1.1\r\nHost: a\r\n\r\n"), self::script());
        self::assertSame('', $params['PATH_INFO']);
        self::assertArrayNotHasKey('PATH_TRANSLATED', $params);
        self::assertSame('/index.php', $params['DOCUMENT_URI']);
        self::assertSame('', $params['QUERY_STRING']);
        self::assertSame('', $params['CONTENT_TYPE']);
        self::assertSame('', $params['CONTENT_LENGTH']);
    }

    public function testTheFrontControllerKeepsTheRequestUri(): void
    {
        $params = CgiParams::build(self::request("GET /blog/2024/hello?p=2 HTTP/1.1\r\nHost: a\r\n\r\n"), self::script());
        self::assertSame('/blog/2024/hello?p=2', $params['REQUEST_URI']);
        self::assertSame('/index.php', $params['SCRIPT_NAME']);
        self::assertSame('/index.php', $params['DOCUMENT_URI']);
        self::assertSame('p=2', $params['QUERY_STRING']);
    }

    public function testRequestUriIsTheTargetAsSentEvenAnEmptyQuery(): void
    {
        self::assertSame('/a/./b//c?', CgiParams::build(self::request("GET /a/./b//c? HTTP/1.1\r\nHost: a\r\n\r\n"), self::script())['REQUEST_URI']);
    }

    public function testAnAbsoluteFormTargetGivesItsPathAndItsAuthorityAsHost(): void
    {
        $params = CgiParams::build(self::request("GET http://Other.test:81/x.php?q=1 HTTP/1.1\r\nHost: evil\r\n\r\n"), self::script());
        self::assertSame('/x.php?q=1', $params['REQUEST_URI']);
        self::assertSame('Other.test:81', $params['HTTP_HOST']);
        self::assertSame('other.test', $params['SERVER_NAME']);
        self::assertSame('/?q=1', CgiParams::requestUri('http://h?q=1'));
        self::assertSame('/', CgiParams::requestUri('https://h'));
    }

    public function testHeadersBecomeHttpVariables(): void
    {
        $request = self::request("GET / HTTP/1.1\r\nHost: a\r\nX-Multi: 1\r\nx-multi: 2\r\nCookie: a=1\r\nCookie: b=2\r\n"
            . "Accept-Language: fr\r\nAuthorization: Basic dTpw\r\nIf-None-Match: \"x\"\r\n\r\n");
        $params = CgiParams::build($request, self::script());
        self::assertSame('1, 2', $params['HTTP_X_MULTI']);
        self::assertSame('a=1; b=2', $params['HTTP_COOKIE']);
        self::assertSame('fr', $params['HTTP_ACCEPT_LANGUAGE']);
        self::assertSame('Basic dTpw', $params['HTTP_AUTHORIZATION']);
        self::assertSame('"x"', $params['HTTP_IF_NONE_MATCH']);
        self::assertSame('a', $params['HTTP_HOST']);
    }

    public function testProxyNeverBecomesHttpProxy(): void
    {
        $params = CgiParams::build(self::request("GET / HTTP/1.1\r\nHost: a\r\nProxy: http://evil:8080\r\n\r\n"), self::script());
        self::assertArrayNotHasKey('HTTP_PROXY', $params);
        self::assertNotContains('http://evil:8080', $params);
    }

    public function testHeaderNamesThatCouldPoseAsOthersAreDropped(): void
    {
        $params = CgiParams::build(self::request("GET / HTTP/1.1\r\nHost: a\r\nX_Forwarded_For: 1.2.3.4\r\nX.Dot: 1\r\nX-Real: ok\r\n\r\n"), self::script());
        self::assertArrayNotHasKey('HTTP_X_FORWARDED_FOR', $params);
        self::assertSame('ok', $params['HTTP_X_REAL']);
        self::assertSame(1, \count(array_filter(array_keys($params), static fn(string $k) => str_starts_with($k, 'HTTP_X'))));
    }

    public function testHttpsIsOnOnlyForHttps(): void
    {
        $request = self::request("GET / HTTP/1.1\r\nHost: a\r\n\r\n");
        self::assertArrayNotHasKey('HTTPS', CgiParams::build($request, self::script()));
        self::assertSame('http', CgiParams::build($request, self::script())['REQUEST_SCHEME']);
        $request->setForwardedClient(new ForwardedClient('192.0.2.1', 'https'));
        $params = CgiParams::build($request, self::script());
        self::assertSame('on', $params['HTTPS']);
        self::assertSame('https', $params['REQUEST_SCHEME']);
    }

    public function testTheClientAddressFromTrustedProxiesIsTheRemoteAddress(): void
    {
        $request = self::request("GET / HTTP/1.1\r\nHost: a\r\n\r\n");
        $request->setForwardedClient(new ForwardedClient('203.0.113.9'));
        self::assertSame('203.0.113.9', CgiParams::build($request, self::script())['REMOTE_ADDR']);
    }

    public function testPortsAreTheConnectionsOwn(): void
    {
        $request = self::request("GET / HTTP/1.0\r\n\r\n", localPort: 9443, remotePort: 1);
        $params = CgiParams::build($request, self::script());
        self::assertSame('9443', $params['SERVER_PORT']);
        self::assertSame('1', $params['REMOTE_PORT']);
        self::assertSame('127.0.0.2', $params['SERVER_NAME'], 'no Host: the listen address');
        self::assertSame('HTTP/1.0', $params['SERVER_PROTOCOL']);
        self::assertArrayNotHasKey('HTTP_HOST', $params);
    }

    public function testAnUnknownLocalPortIsTakenFromTheHostOrTheScheme(): void
    {
        self::assertSame('8081', CgiParams::build(self::request("GET / HTTP/1.1\r\nHost: a:8081\r\n\r\n", localPort: 0), self::script())['SERVER_PORT']);
        self::assertSame('8082', CgiParams::build(self::request("GET / HTTP/1.1\r\nHost: [::1]:8082\r\n\r\n", localPort: 0), self::script())['SERVER_PORT']);
        self::assertSame('80', CgiParams::build(self::request("GET / HTTP/1.1\r\nHost: [::1]\r\n\r\n", localPort: 0), self::script())['SERVER_PORT']);
        $https = self::request("GET / HTTP/1.1\r\nHost: a\r\n\r\n", localPort: 0);
        $https->setForwardedClient(new ForwardedClient('192.0.2.1', 'https'));
        self::assertSame('443', CgiParams::build($https, self::script())['SERVER_PORT']);
    }

    public function testBehindATrustedProxyTheServerPortIsTheOneTheClientReached(): void
    {
        $request = self::request("GET / HTTP/1.1\r\nHost: a\r\n\r\n", localPort: 8080);
        $request->setForwardedClient(new ForwardedClient('192.0.2.1', 'https', null, 443));
        $params = CgiParams::build($request, self::script());
        self::assertSame('443', $params['SERVER_PORT']);
        self::assertSame('on', $params['HTTPS']);
        self::assertSame('https', $params['REQUEST_SCHEME']);
    }

    public function testAChunkedBodyGetsItsLength(): void
    {
        $request = self::request("POST /x HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n");
        $params = CgiParams::build($request, self::script());
        self::assertSame('5', $params['CONTENT_LENGTH']);
        self::assertSame('chunked', $params['HTTP_TRANSFER_ENCODING']);
    }

    public function testExtrasAreAddedLastAndWin(): void
    {
        $params = CgiParams::build(self::request("GET / HTTP/1.1\r\nHost: a\r\n\r\n"), self::script(), ['PHP_VALUE' => 'x=1', 'SERVER_SOFTWARE' => 'mine']);
        self::assertSame('x=1', $params['PHP_VALUE']);
        self::assertSame('mine', $params['SERVER_SOFTWARE']);
        self::assertSame('PHP_VALUE', array_key_last($params));
    }

    public function testARewrittenQueryAndHtaccessVariablesReachTheScriptButNeverReplaceTheCgiOnes(): void
    {
        $script = new Script('/srv/www/index.php', '/index.php', '', '/srv/www', 'id=3&x=1', [
            'SITE' => 'kiln', 'REQUEST_URI' => '/forged', 'HTTP_HOST' => 'forged', 'REDIRECT_URL' => '/item/3',
        ]);
        $params = CgiParams::build(self::request("GET /item/3?x=1 HTTP/1.1\r\nHost: a\r\n\r\n"), $script);
        self::assertSame('id=3&x=1', $params['QUERY_STRING']);
        self::assertSame('/item/3?x=1', $params['REQUEST_URI'], 'REQUEST_URI stays the one the client sent, as Apache');
        self::assertSame(['kiln', '/item/3', 'a', '200'], [$params['SITE'], $params['REDIRECT_URL'], $params['HTTP_HOST'], $params['REDIRECT_STATUS']]);
    }

    public function testAnErrorDocumentScriptGetsTheErrorsStatusAsRedirectStatus(): void
    {
        $script = new Script('/srv/www/404.php', '/404.php', '', '/srv/www', env: ['REDIRECT_STATUS' => '404']);
        self::assertSame('404', CgiParams::build(self::request("GET /gone HTTP/1.1\r\nHost: a\r\n\r\n"), $script)['REDIRECT_STATUS']);
    }

    private static function script(): Script
    {
        return new Script('/srv/www/index.php', '/index.php', '', '/srv/www');
    }

    private static function request(string $raw, int $localPort = 8080, int $remotePort = 51234): Request
    {
        $parser = new RequestParser(new Limits());
        $parser->feed($raw);
        $head = $parser->next();
        self::assertInstanceOf(RequestHead::class, $head);
        $body = '';
        while (($item = $parser->next()) instanceof BodyChunk) {
            $body .= $item->data;
        }
        return new Request($head, $body, null, '192.0.2.7', $remotePort, '127.0.0.2', $localPort);
    }
}
