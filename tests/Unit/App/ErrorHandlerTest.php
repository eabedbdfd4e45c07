<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\App;

use Kiln\App\ErrorHandler;
use Kiln\App\HttpErrorException;
use Kiln\Http\Request;
use Kiln\Http\Response;
use Kiln\Http\Wire\RequestHead;
use Kiln\Store\BusException;
use Kiln\Store\StoreException;
use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;

final class ErrorHandlerTest extends TestCase
{
    private const SECRET = 'SQLSTATE[28000] password=hunter2 at /srv/app/Db.php';

    private const CHROME = 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8';

    /** @return iterable<string, array{list<string>, string}> */
    public static function acceptTable(): iterable
    {
        yield 'no Accept' => [[], 'text/plain'];
        yield 'empty Accept' => [[''], 'text/plain'];
        yield 'curl */*' => [['*/*'], 'text/plain'];
        yield 'JSON' => [['application/json'], 'application/json'];
        yield 'problem+json' => [['application/problem+json'], 'application/json'];
        yield 'vendor +json' => [['application/vnd.api+json'], 'application/json'];
        yield 'application/*' => [['application/*'], 'application/json'];
        yield 'HTML refused with q=0' => [['text/html;q=0, application/json'], 'application/json'];
        yield 'JSON preferred by q' => [['text/html;q=0.5, application/json;q=0.9'], 'application/json'];
        yield 'HTML preferred by q' => [['application/json;q=0.5, text/html'], 'text/html'];
        yield 'spaces around q' => [['application/json ; q=0.9, text/plain ; q=0.8'], 'application/json'];
        yield 'explicit beats wildcard' => [['*/*;q=0.1, application/json;q=0.1'], 'application/json'];
        yield 'JSON refused, rest by wildcard' => [['application/json;q=0, */*'], 'text/plain'];
        yield 'plain first' => [['text/plain, application/json;q=0.9'], 'text/plain'];
        yield 'Chrome' => [[self::CHROME], 'text/html'];
        yield 'Firefox' => [['text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8'], 'text/html'];
        yield 'old IE: images and */*' => [['image/gif, image/jpeg, image/pjpeg, */*'], 'text/html'];
        yield 'text/* is not a browser' => [['text/*'], 'text/plain'];
        yield 'case-insensitive' => [['TEXT/HTML'], 'text/html'];
        yield 'media type parameter' => [['text/html;level=1;q=0.9'], 'text/html'];
        yield 'nothing acceptable' => [['image/png'], 'text/plain'];
        yield 'invalid q skipped' => [['application/json;q=2, text/html;q=0.5'], 'text/html'];
        yield 'garbage' => [['json, ;;;, /, */html'], 'text/plain'];
        yield 'two Accept fields' => [['text/html;q=0', 'application/json'], 'application/json'];
    }

    /** @param list<string> $accept */
    #[DataProvider('acceptTable')]
    public function testTheRepresentationFollowsTheAcceptHeader(array $accept, string $expected): void
    {
        $response = (new ErrorHandler())->render(HttpErrorException::notFound(), self::request($accept));
        self::assertSame(404, $response->status());
        self::assertStringStartsWith($expected, (string) $response->header('Content-Type'));
        self::assertSame('Accept', $response->header('Vary'));
    }

    public function testSharedStateOrTheBusUnreachableIsA503WithRetryAfterAndNoDetail(): void
    {
        foreach ([new StoreException('Redis: connection refused to 10.0.0.5:6379'), new BusException('Redis is unreachable')] as $error) {
            $response = (new ErrorHandler())->render($error, self::request(['application/json']));
            self::assertSame(503, $response->status(), $error::class);
            self::assertSame('1', $response->header('Retry-After'));
            self::assertStringNotContainsString('10.0.0.5', self::body($response));
        }
    }

    public function testTheJsonBodyNamesStatusAndMessage(): void
    {
        $response = (new ErrorHandler())->render(HttpErrorException::notFound(), self::request(['application/json']));
        self::assertSame(['error' => ['status' => 404, 'message' => 'Not Found']], json_decode(self::body($response), true));
    }

    public function testTheHtmlPageIsSelfContainedAndEscapesTheMessage(): void
    {
        $error = HttpErrorException::badRequest('<script>alert("x")</script> & more');
        $html = self::body((new ErrorHandler())->render($error, self::request([self::CHROME])));
        self::assertStringStartsWith('<!DOCTYPE html>', $html);
        self::assertStringContainsString('<title>400 Bad Request</title>', $html);
        self::assertStringContainsString('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; more', $html);
        self::assertStringNotContainsString('<script', $html);
        self::assertDoesNotMatchRegularExpression('~(src|href)=~', $html, 'no external resources');
    }

    public function testThePlainTextPageIsStatusLineThenMessage(): void
    {
        $text = self::body((new ErrorHandler())->render(HttpErrorException::forbidden('Admins only'), self::request([])));
        self::assertSame("403 Forbidden\nAdmins only\n", $text);
        self::assertSame("404 Not Found\n", self::body((new ErrorHandler())->render(HttpErrorException::notFound(), self::request([]))));
    }

    public function testAnHttpErrorKeepsItsStatusAndHeaders(): void
    {
        $handler = new ErrorHandler();
        $response = $handler->render(HttpErrorException::methodNotAllowed(['GET', 'HEAD']), self::request(['application/json']));
        self::assertSame(405, $response->status());
        self::assertSame('GET, HEAD', $response->header('Allow'));
        $response = $handler->render(HttpErrorException::tooManyRequests(30), self::request([]));
        self::assertSame(429, $response->status());
        self::assertSame('30', $response->header('Retry-After'));
    }

    public function testAnyOtherThrowableIsA500(): void
    {
        $response = (new ErrorHandler())->render(new \TypeError('x'), self::request(['application/json']));
        self::assertSame(500, $response->status());
        self::assertSame(['error' => ['status' => 500, 'message' => 'Internal Server Error']], json_decode(self::body($response), true));
    }

    /** @return iterable<string, array{list<string>}> */
    public static function formats(): iterable
    {
        yield 'HTML' => [[self::CHROME]];
        yield 'JSON' => [['application/json']];
        yield 'text' => [[]];
    }

    /** @param list<string> $accept */
    #[DataProvider('formats')]
    public function testProductionNeverShowsInternals(array $accept): void
    {
        $error = new \RuntimeException(self::SECRET, 0, new \LogicException('previous ' . self::SECRET));
        foreach ([$error, new HttpErrorException(503, 'Down for maintenance', [], $error)] as $thrown) {
            $body = self::body((new ErrorHandler())->render($thrown, self::request($accept)));
            self::assertStringNotContainsString('hunter2', $body);
            self::assertStringNotContainsString('RuntimeException', $body);
            self::assertStringNotContainsString('LogicException', $body);
            self::assertStringNotContainsString(__FILE__, $body);
            self::assertStringNotContainsString(basename(__FILE__), $body);
            self::assertStringNotContainsString('#0 ', $body);
            self::assertStringNotContainsString('debug', $body);
        }
    }

    public function testDebugModeShowsClassMessageLocationAndTraceEscapedInHtml(): void
    {
        $error = new \RuntimeException('<b>' . self::SECRET . '</b>');
        $line = __LINE__ - 1;
        $html = self::body((new ErrorHandler(debug: true))->render($error, self::request([self::CHROME])));
        self::assertStringContainsString('RuntimeException', $html);
        self::assertStringContainsString('&lt;b&gt;SQLSTATE[28000] password=hunter2', $html);
        self::assertStringNotContainsString('<b>', $html);
        self::assertStringContainsString(htmlspecialchars(__FILE__ . ':' . $line), $html);
        self::assertStringContainsString('#0 ', $html);
        self::assertStringContainsString('<h1>500 Internal Server Error</h1>', $html);
    }

    public function testDebugModePutsTheDetailsUnderDebugInJson(): void
    {
        $error = new \RuntimeException('outer', 0, new \LogicException('inner'));
        $line = __LINE__ - 1;
        $json = json_decode(self::body((new ErrorHandler(debug: true))->render($error, self::request(['application/json']))), true);
        self::assertIsArray($json);
        self::assertSame(['status' => 500, 'message' => 'Internal Server Error'], $json['error']);
        self::assertSame('RuntimeException', $json['debug']['class']);
        self::assertSame('outer', $json['debug']['message']);
        self::assertSame(__FILE__, $json['debug']['file']);
        self::assertSame($line, $json['debug']['line']);
        self::assertStringStartsWith('#0 ', $json['debug']['trace'][0]);
        self::assertSame('LogicException', $json['debug']['previous'][0]['class']);
        self::assertSame('inner', $json['debug']['previous'][0]['message']);
    }

    public function testDebugModeInPlainText(): void
    {
        $text = self::body((new ErrorHandler(debug: true))->render(new \RuntimeException('boom'), self::request([])));
        self::assertStringStartsWith("500 Internal Server Error\n\nRuntimeException: boom\n  at " . __FILE__, $text);
    }

    public function testACustomHandlerRendersItsStatus(): void
    {
        $handler = new ErrorHandler();
        $seen = [];
        $handler->onError(404, function (Request $request, \Throwable $error) use (&$seen): string {
            $seen[] = [$request->path(), $error->getMessage()];
            return '<h1>Nothing at ' . htmlspecialchars($request->path()) . '</h1>';
        });
        $response = $handler->render(HttpErrorException::notFound('No such user'), self::request([], '/users/7'));
        self::assertSame(404, $response->status());
        self::assertSame('<h1>Nothing at /users/7</h1>', self::body($response));
        self::assertSame([['/users/7', 'No such user']], $seen);

        $other = $handler->render(HttpErrorException::forbidden(), self::request([]));
        self::assertSame("403 Forbidden\n", self::body($other), 'a handler serves only its own status');
    }

    public function testACustomHandlerMayChooseItsResponseAndGetsTheThrowable(): void
    {
        $handler = new ErrorHandler();
        $handler->onError(500, fn(Request $r, \Throwable $e): Response => Response::json(['oops' => $e::class], 503));
        $response = $handler->render(new \DomainException('x'), self::request([]));
        self::assertSame(503, $response->status());
        self::assertSame('{"oops":"DomainException"}', self::body($response));

        $handler->onError(404, fn(): array => ['missing' => true]);
        $response = $handler->render(HttpErrorException::notFound(), self::request([]));
        self::assertSame(404, $response->status());
        self::assertSame('application/json', $response->header('Content-Type'));
    }

    public function testACustomHandlerKeepsTheHeadersOfTheError(): void
    {
        $handler = new ErrorHandler();
        $handler->onError(405, fn(): string => 'Try another method');
        $response = $handler->render(HttpErrorException::methodNotAllowed(['POST']), self::request([]));
        self::assertSame(405, $response->status());
        self::assertSame('POST', $response->header('Allow'));
    }

    public function testACustomHandlerThatThrowsFallsBackToTheDefaultPage(): void
    {
        $reports = [];
        $handler = new ErrorHandler(log: function (string $message) use (&$reports): void {
            $reports[] = $message;
        });
        $calls = 0;
        $handler->onError(500, function () use (&$calls): never {
            $calls++;
            throw new \RuntimeException('the error page itself failed: ' . self::SECRET);
        });
        $response = $handler->render(new \LogicException('first'), self::request(['application/json']));
        self::assertSame(500, $response->status());
        self::assertSame(['error' => ['status' => 500, 'message' => 'Internal Server Error']], json_decode(self::body($response), true));
        self::assertSame(1, $calls, 'the handler is not called again for its own failure');
        self::assertCount(1, $reports);
        self::assertStringContainsString('onError(500)', $reports[0]);
        self::assertStringContainsString('the error page itself failed', $reports[0]);
    }

    public function testAHeadRequestGetsTheSameStatusAndHeadersAsGet(): void
    {
        $handler = new ErrorHandler();
        $get = $handler->render(HttpErrorException::unauthorized('Admin'), self::request(['application/json']));
        $head = $handler->render(HttpErrorException::unauthorized('Admin'), self::request(['application/json'], '/', 'HEAD'));
        self::assertSame(401, $head->status());
        self::assertSame($get->headers(), $head->headers());
        self::assertSame(self::body($get), self::body($head), 'the engine drops the body of a HEAD response');
    }

    public function testOnErrorTakesOnlyErrorStatuses(): void
    {
        $this->expectException(\ValueError::class);
        (new ErrorHandler())->onError(302, fn() => '');
    }

    /** @param list<string> $accept */
    private static function request(array $accept, string $path = '/', string $method = 'GET'): Request
    {
        $headers = ['host' => ['test']];
        if ($accept !== []) {
            $headers['accept'] = $accept;
        }
        $head = new RequestHead($method, $path, '1.1', $headers, $path, '', 'test', RequestHead::BODY_NONE, 0, true, false);
        return new Request($head, '', null, '127.0.0.1', 40000);
    }

    private static function body(Response $response): string
    {
        $body = $response->body();
        self::assertIsString($body);
        return $body;
    }
}
