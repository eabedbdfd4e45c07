<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\App;

use Kiln\App\App;
use Kiln\App\Handler\OutputCapture;
use Kiln\App\HttpErrorException;
use Kiln\App\Middleware;
use Kiln\App\Routing\RouteCollector;
use Kiln\Http\Request;
use Kiln\Http\RequestHandler;
use Kiln\Http\Response;
use Kiln\Http\Wire\RequestHead;
use PHPUnit\Framework\TestCase;

final class AppTest extends TestCase
{
    /** @var list<string> */
    private array $trace = [];

    protected function tearDown(): void
    {
        // Handlers run under the worker-wide echo capture; a test process is not a worker.
        OutputCapture::instance()->uninstall();
    }

    public function testMiddlewareRunsGlobalThenGroupThenRouteInTheOrderWritten(): void
    {
        $app = new App();
        $app->middleware($this->tag('global-1'), $this->tag('global-2'));
        $app->group('/admin', function (RouteCollector $admin): void {
            $admin->get('/stats', function (): string {
                $this->trace[] = 'handler';
                return 'stats';
            })->middleware($this->tag('route'));
        }, [$this->tag('group')]);
        $response = $app->handle(self::request('GET', '/admin/stats'));
        self::assertSame('stats', $response->body());
        self::assertSame(['global-1', 'global-2', 'group', 'route', 'handler', 'route<', 'group<', 'global-2<', 'global-1<'], $this->trace);
    }

    public function testARouteServedAgainGetsTheSameParamsAndMiddlewareAsOnItsFirstRequest(): void
    {
        $app = new App();
        $app->get('/page', fn(Request $request) => $request->attribute(App::ROUTE_PARAMS))->defaults(['lang' => 'en']);
        $app->get('/guarded', function (): string {
            $this->trace[] = 'handler';
            return 'guarded';
        })->middleware($this->tag('route'));
        $app->get('/users/{id:\d+}', fn(Request $request) => $request->attribute(App::ROUTE_PARAMS));

        foreach ([1, 2] as $_) {
            self::assertSame('{"lang":"en"}', $app->handle(self::request('GET', '/page'))->body());
            self::assertSame('guarded', $app->handle(self::request('GET', '/guarded'))->body());
            self::assertSame('{"id":"7"}', $app->handle(self::request('GET', '/users/7'))->body());
        }
        self::assertSame('{"id":"8"}', $app->handle(self::request('GET', '/users/8'))->body());
        self::assertSame(['route', 'handler', 'route<', 'route', 'handler', 'route<'], $this->trace);
    }

    public function testARouteAddedAfterRequestsWereServedIsServedToo(): void
    {
        $app = new App();
        $app->get('/first', fn() => 'first');
        self::assertSame('first', $app->handle(self::request('GET', '/first'))->body());
        self::assertSame(404, $app->handle(self::request('GET', '/later'))->status());

        $app->get('/later', fn() => 'later');
        self::assertSame('later', $app->handle(self::request('GET', '/later'))->body());
        self::assertSame('first', $app->handle(self::request('GET', '/first'))->body());
    }

    public function testMiddlewareCanShortCircuit(): void
    {
        $app = new App();
        $app->middleware(new class implements Middleware {
            public function process(Request $request, RequestHandler $next): Response
            {
                return Response::text('stopped', 418);
            }
        });
        $app->get('/x', fn() => throw new \LogicException('must not run'));
        $response = $app->handle(self::request('GET', '/x'));
        self::assertSame(418, $response->status());
        self::assertSame('stopped', $response->body());
    }

    public function testNotFoundMethodNotAllowedAutoOptionsAndHead(): void
    {
        $app = new App();
        $app->get('/users/{id:\d+}', fn(int $id) => ['id' => $id]);
        $app->post('/users/{id:\d+}', fn(int $id) => 201);

        self::assertSame(404, $app->handle(self::request('GET', '/nope'))->status());
        self::assertSame(404, $app->handle(self::request('GET', '/users/abc'))->status());

        $notAllowed = $app->handle(self::request('DELETE', '/users/5'));
        self::assertSame(405, $notAllowed->status());
        self::assertSame('GET, HEAD, POST, OPTIONS', $notAllowed->header('Allow'));

        $options = $app->handle(self::request('OPTIONS', '/users/5'));
        self::assertSame(204, $options->status());
        self::assertSame('GET, HEAD, POST, OPTIONS', $options->header('Allow'));

        $head = $app->handle(self::request('HEAD', '/users/7'));
        self::assertSame(200, $head->status());
        self::assertSame('{"id":7}', $head->body(), 'HEAD runs the GET handler; the engine drops the body');
    }

    public function testErrorsAreRenderedByAcceptAndInternalsNeverLeak(): void
    {
        $app = new App();
        $app->get('/boom', fn() => throw new \RuntimeException('secret database password'));
        $app->get('/teapot', fn() => throw new HttpErrorException(418, 'I am a teapot'));

        $json = $app->handle(self::request('GET', '/boom', ['accept' => ['application/json']]));
        self::assertSame(500, $json->status());
        self::assertStringStartsWith('application/json', (string) $json->header('Content-Type'));
        self::assertIsString($json->body());
        self::assertStringNotContainsString('secret', $json->body());
        self::assertInstanceOf(\RuntimeException::class, $json->failure(), 'a 500 is reported to the error log');

        $html = $app->handle(self::request('GET', '/teapot', ['accept' => ['text/html']]));
        self::assertSame(418, $html->status());
        self::assertIsString($html->body());
        self::assertStringContainsString('I am a teapot', $html->body());
        self::assertNull($html->failure(), 'a 4xx HttpErrorException is the client\'s business, not the log\'s');
    }

    public function testABadRequestBodyIsA400NotA500(): void
    {
        $app = new App();
        $app->post('/data', fn(Request $r) => $r->parsedBody());
        $head = new RequestHead('POST', '/data', '1.1', ['host' => ['x'], 'content-type' => ['application/json']], '/data', '', 'x', RequestHead::BODY_LENGTH, 5, true, false);
        $response = $app->handle(new Request($head, '{"a":', null, '127.0.0.1', 40000));
        self::assertSame(400, $response->status());
        self::assertNull($response->failure(), 'the client\'s mistake is not logged as a server failure');
    }

    public function testCustomErrorPagePerStatus(): void
    {
        $app = new App();
        $app->onError(404, fn(Request $r, \Throwable $e) => 'No page at ' . $r->path());
        $response = $app->handle(self::request('GET', '/missing'));
        self::assertSame(404, $response->status());
        self::assertSame('No page at /missing', $response->body());
    }

    public function testNamedRoutesGenerateUrls(): void
    {
        $app = new App();
        $app->get('/users/{id:\d+}[/{tab}]', fn() => '')->name('user');
        self::assertSame('/users/5', $app->url('user', ['id' => 5]));
        self::assertSame('/users/5/posts?page=2', $app->url('user', ['id' => 5, 'tab' => 'posts'], ['page' => 2]));
    }

    public function testApiFolderEndpointsAreMounted(): void
    {
        $app = new App();
        $app->api(\dirname(__DIR__, 2) . '/Fixtures/api');
        self::assertSame(200, $app->handle(self::request('GET', '/api/users/list'))->status());
        self::assertSame(404, $app->handle(self::request('GET', '/api/users/_helper'))->status());
        self::assertSame(405, $app->handle(self::request('DELETE', '/api/users'))->status());
    }

    public function testAnUnresolvableHandlerIsRefusedAtRegistration(): void
    {
        $this->expectException(\Error::class);
        (new App())->get('/x', 'no_such_function_anywhere');
    }

    private function tag(string $name): Middleware
    {
        return new class ($name, $this->trace) implements Middleware {
            /** @param list<string> $trace */
            public function __construct(private readonly string $name, private array &$trace) {}

            public function process(Request $request, RequestHandler $next): Response
            {
                $this->trace[] = $this->name;
                $response = $next->handle($request);
                $this->trace[] = $this->name . '<';
                return $response;
            }
        };
    }

    /** @param array<string, list<string>> $headers */
    private static function request(string $method, string $path, array $headers = []): Request
    {
        $head = new RequestHead($method, $path, '1.1', ['host' => ['x']] + $headers, $path, '', 'x', RequestHead::BODY_NONE, 0, true, false);
        return new Request($head, '', null, '127.0.0.1', 40000);
    }
}
