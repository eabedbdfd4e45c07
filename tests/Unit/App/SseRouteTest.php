<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\App;

use Kiln\App\App;
use Kiln\App\Context;
use Kiln\App\Handler\OutputCapture;
use Kiln\App\HttpErrorException;
use Kiln\Http\Request;
use Kiln\Http\Response;
use Kiln\Http\Sse\EventStream;
use Kiln\Http\Wire\RequestHead;
use PHPUnit\Framework\TestCase;

final class SseRouteTest extends TestCase
{
    protected function tearDown(): void
    {
        OutputCapture::instance()->uninstall(); // handlers' echo capture, as the worker would keep it
    }

    /** @param array<string, list<string>> $headers */
    private static function request(string $path, array $headers = []): Request
    {
        $head = new RequestHead('GET', $path, '1.1', ['host' => ['x']] + $headers, $path, '', 'x', RequestHead::BODY_NONE, 0, true, false);
        return new Request($head, '', null, '127.0.0.1', 40000);
    }

    public function testAnSseRouteWithoutAHandlerNeedsATopicParameter(): void
    {
        $this->expectException(\ValueError::class);
        (new App())->sse('/events');
    }

    public function testTheHandlerGetsTheStreamWithTheClientsLastEventIdAndTheRouteParameters(): void
    {
        $app = new App();
        $seen = [];
        $app->sse('/live/{account}', static function (EventStream $stream, Context $context) use (&$seen): void {
            $seen = [$stream->lastEventId(), $context->param('account')];
            $stream->send('hello');
        });
        $response = $app->handle(self::request('/live/42', ['last-event-id' => ['17']]));
        self::assertSame(['17', '42'], $seen);
        self::assertSame(200, $response->status());
        self::assertSame('text/event-stream; charset=utf-8', $response->header('Content-Type'));
        self::assertSame('no-cache', $response->header('Cache-Control'));
        self::assertSame('no', $response->header('X-Accel-Buffering'));
        $stream = $response->body();
        self::assertInstanceOf(EventStream::class, $stream);
        self::assertTrue($stream->isOpen());
        self::assertFalse($stream->isStarted(), 'it starts once the server wrote its head');
    }

    public function testAHandlerRefusesWithAnHttpErrorOrAnswersWithAResponseOfItsOwn(): void
    {
        $app = new App();
        $app->sse('/denied', static function (): never {
            throw new HttpErrorException(403);
        });
        $app->sse('/moved', static fn(): Response => Response::redirect('/elsewhere'));
        self::assertSame(403, $app->handle(self::request('/denied'))->status());
        $moved = $app->handle(self::request('/moved'));
        self::assertSame(302, $moved->status());
        self::assertSame('/elsewhere', $moved->header('Location'));
    }

    public function testOnlyGetIsRouted(): void
    {
        $app = new App();
        $app->sse('/events/{topic}');
        $head = new RequestHead('POST', '/events/x', '1.1', ['host' => ['x']], '/events/x', '', 'x', RequestHead::BODY_NONE, 0, true, false);
        self::assertSame(405, $app->handle(new Request($head, '', null, '127.0.0.1', 40000))->status());
    }
}
