<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\App;

use Kiln\App\App;
use Kiln\App\Handler\OutputCapture;
use Kiln\App\HttpErrorException;
use Kiln\App\Middleware;
use Kiln\Http\Request;
use Kiln\Http\RequestHandler;
use Kiln\Http\Response;
use Kiln\Http\WebSocket\Connection;
use Kiln\Http\WebSocket\Message;
use Kiln\Http\WebSocket\WebSocketHandler;
use Kiln\Http\Wire\RequestHead;
use Kiln\Loop\Driver\SelectDriver;
use Kiln\Loop\Loop;
use PHPUnit\Framework\TestCase;

final class WebSocketRouteTest extends TestCase
{
    private const HANDSHAKE = ['upgrade' => ['websocket'], 'connection' => ['Upgrade'],
        'sec-websocket-key' => ['dGhlIHNhbXBsZSBub25jZQ=='], 'sec-websocket-version' => ['13']];

    protected function setUp(): void
    {
        Loop::set(new SelectDriver());
    }

    protected function tearDown(): void
    {
        OutputCapture::instance()->uninstall();
    }

    public function testAHandshakeIsAnsweredWith101AfterTheMiddlewareAndOnOpenSawTheRouteParams(): void
    {
        $app = new App();
        /** @var \ArrayObject<string, mixed> $seen */
        $seen = new \ArrayObject();
        $app->middleware(self::marking());
        $app->ws('/chat/{room}', static fn() => null, onOpen: static function (Connection $c, Request $r) use ($seen): void {
            $seen['params'] = $r->attribute(App::ROUTE_PARAMS);
            $seen['middleware'] = $r->attribute('marked');
        });
        $response = $app->handle(self::request('/chat/lobby', self::HANDSHAKE));
        self::assertSame(101, $response->status());
        self::assertNotNull($response->upgrade());
        self::assertSame('s3pPLMBiTxaQ9kYGzzhZRbK+xOo=', $response->header('sec-websocket-accept'));
        self::assertSame(['room' => 'lobby'], $seen['params']);
        self::assertTrue($seen['middleware']);
    }

    public function testAnOnOpenThatThrowsAnHttpErrorAnswersWithItsStatus(): void
    {
        $app = new App();
        $app->ws('/ws', static fn() => null, onOpen: static fn() => throw new HttpErrorException(409, 'full'));
        self::assertSame(409, $app->handle(self::request('/ws', self::HANDSHAKE))->status());
    }

    public function testAPlainRequestToAWebSocketRouteGets426AndAWrongVersion426WithTheVersion(): void
    {
        $app = new App();
        $app->ws('/ws', static fn() => null);
        $plain = $app->handle(self::request('/ws'));
        self::assertSame(426, $plain->status());
        self::assertSame('websocket', $plain->header('upgrade'));
        $old = $app->handle(self::request('/ws', ['sec-websocket-version' => ['8']] + self::HANDSHAKE));
        self::assertSame(426, $old->status());
        self::assertSame('13', $old->header('sec-websocket-version'));
    }

    public function testAHandlerObjectTakesNoSeparateCallbacks(): void
    {
        $handler = new class implements WebSocketHandler {
            public function onOpen(Connection $connection, Request $request): void {}

            public function onMessage(Connection $connection, Message $message): void {}

            public function onClose(Connection $connection, int $code, string $reason): void {}
        };
        $this->expectException(\ValueError::class);
        (new App())->ws('/ws', $handler, onOpen: static fn() => null);
    }

    private static function marking(): Middleware
    {
        return new class implements Middleware {
            public function process(Request $request, RequestHandler $next): Response
            {
                $request->setAttribute('marked', true);
                return $next->handle($request);
            }
        };
    }

    /** @param array<string, list<string>> $headers */
    private static function request(string $path, array $headers = []): Request
    {
        $head = new RequestHead('GET', $path, '1.1', ['host' => ['x']] + $headers, $path, '', 'x', RequestHead::BODY_NONE, 0, true, false);
        return new Request($head, '', null, '127.0.0.1', 40000);
    }
}
