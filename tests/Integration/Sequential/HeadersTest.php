<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Sequential;

/** header(), setcookie(), http_response_code() and friends work as under php-fpm. */
final class HeadersTest extends SequentialTestCase
{
    public function testHeadersCookiesAndTheStatusAScriptSetsAreTheResponse(): void
    {
        $response = $this->get('/headers.php');
        self::assertSame(201, $response['status']);
        self::assertSame(['1'], $response['headers']['x-one']);
        self::assertSame(['a', 'b'], $response['headers']['x-multi']);
        self::assertArrayNotHasKey('x-removed', $response['headers']);
        self::assertSame(['plain=va%20lue; path=/; HttpOnly', 'raw=r%20w'], $response['headers']['set-cookie']);
        self::assertSame(['text/html; charset=UTF-8'], $response['headers']['content-type'], 'PHP\'s default type');
        $seen = self::json($response);
        self::assertSame(['X-One: 1', 'X-Multi: a', 'X-Multi: b', 'Set-Cookie: plain=va%20lue; path=/; HttpOnly', 'Set-Cookie: raw=r%20w'], $seen['list']);
        self::assertFalse($seen['sent'], 'headers_sent() is false while the script runs');
        self::assertSame(201, $seen['code']);
    }

    public function testHeadersDoNotLeakIntoTheNextRequest(): void
    {
        $this->get('/headers.php');
        $next = $this->get('/pid.php');
        self::assertSame(200, $next['status']);
        self::assertArrayNotHasKey('x-one', $next['headers']);
        self::assertArrayNotHasKey('set-cookie', $next['headers']);
    }

    public function testAStatusHeaderSetsTheStatusAndIsNotSent(): void
    {
        $response = $this->get('/status.php');
        self::assertSame(404, $response['status']);
        self::assertArrayNotHasKey('status', $response['headers']);
        self::assertSame('not here', $response['body']);
    }

    public function testALocationHeaderAloneRedirectsWith302(): void
    {
        $response = $this->get('/redirect.php');
        self::assertSame(302, $response['status']);
        self::assertSame(['/elsewhere'], $response['headers']['location']);
    }

    public function testALocationHeaderAfterAPostRedirectsWith302AsUnderPhpFpm(): void
    {
        $response = $this->request('POST', '/post-redirect.php', ['Content-Type' => 'application/x-www-form-urlencoded', 'X-Custom-Thing' => 'yes'], 'a=1');
        self::assertSame(302, $response['status'], 'php-fpm and php-cgi leave the protocol at HTTP/1.0, so PHP picks 302, not 303');
        self::assertSame(['/done'], $response['headers']['location']);
        $headers = self::json($response);
        self::assertSame('yes', $headers['X-Custom-Thing'], 'getallheaders() exists, names as php-fpm gives them');
        self::assertSame('application/x-www-form-urlencoded', $headers['Content-Type']);
    }

    public function testHeadGetsTheHeadersWithoutTheBody(): void
    {
        $response = $this->request('HEAD', '/headers.php');
        self::assertSame(201, $response['status']);
        self::assertSame('', $response['body']);
        self::assertSame(['1'], $response['headers']['x-one']);
    }

    public function testHeadAdvertisesTheContentLengthTheScriptSetWhenItPrintsNothing(): void
    {
        $get = $this->get('/head-length.php');
        self::assertSame('hello world', $get['body']);
        foreach (['/head-length.php', '/head-length.php?exit=1'] as $target) {
            $response = $this->request('HEAD', $target);
            self::assertSame(200, $response['status'], $target);
            self::assertSame('', $response['body'], $target);
            self::assertSame(['11'], $response['headers']['content-length'] ?? null, "$target: the length a GET gets, as Apache and php-fpm give it, not 0");
        }
    }

    public function testTheContentTypeAScriptSetIsSpelledAsApacheSendsIt(): void
    {
        $response = $this->get('/head-length.php');
        self::assertStringContainsString("\r\nContent-Type: text/plain;charset=UTF-8\r\n", $response['raw'], 'PHP writes `Content-type`');
    }
}
