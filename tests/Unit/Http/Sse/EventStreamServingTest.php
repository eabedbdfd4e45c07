<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Http\Sse;

use Kiln\Http\HttpServer;
use Kiln\Http\Limits;
use Kiln\Http\Request;
use Kiln\Http\RequestHandler;
use Kiln\Http\Response;
use Kiln\Http\Sse\EventStream;
use Kiln\Loop\Driver\SelectDriver;
use Kiln\Loop\Loop;
use Kiln\Tests\Support\SseParser;
use PHPUnit\Framework\TestCase;

/**
 * An HttpServer in this process, on a unix socket, serving event streams to a client socket driven by the
 * same loop: framing, the end of a stream from either side, heartbeats, slow clients.
 */
final class EventStreamServingTest extends TestCase
{
    private string $path;

    private ?HttpServer $server = null;

    private FakeWorkerContext $context;

    /** @var list<EventStream> the streams the handler made, in order */
    private array $streams = [];

    /** @var list<string> what onClose saw, one entry per stream that ended */
    private array $closed = [];

    /** @var resource|null */
    private mixed $client = null;

    private string $received = '';

    protected function setUp(): void
    {
        Loop::set(new SelectDriver());
        Loop::setErrorHandler(null);
        $this->path = sys_get_temp_dir() . '/kiln-sse-test-' . getmypid() . '-' . bin2hex(random_bytes(4)) . '.sock';
        $this->context = new FakeWorkerContext();
    }

    protected function tearDown(): void
    {
        if (\is_resource($this->client)) {
            fclose($this->client);
        }
        $this->server?->stop();
        @unlink($this->path);
    }

    private function serve(Limits $limits = new Limits()): void
    {
        $handler = new class ($this->openStream(...)) implements RequestHandler {
            /** @param \Closure(Request): Response $open */
            public function __construct(private readonly \Closure $open) {}

            public function handle(Request $request): Response
            {
                return ($this->open)($request);
            }
        };
        $listener = stream_socket_server('unix://' . $this->path);
        self::assertIsResource($listener);
        $this->server = new HttpServer($handler, $limits);
        $this->server->start([$listener], $this->context);
        $client = stream_socket_client('unix://' . $this->path);
        self::assertIsResource($client);
        stream_set_blocking($client, false);
        $this->client = $client;
    }

    private function openStream(Request $request): Response
    {
        if ($request->path() === '/plain') {
            return Response::text('plain');
        }
        $stream = EventStream::for($request);
        $stream->send('first');
        $stream->onClose(function (EventStream $stream): void {
            $this->closed[] = 'closed';
        });
        $this->streams[] = $stream;
        return $stream->response();
    }

    private function send(string $bytes): void
    {
        \assert(\is_resource($this->client));
        fwrite($this->client, $bytes);
    }

    /** Runs the loop, reading the client side, until $done holds (at most 3 s). */
    private function runUntil(\Closure $done, bool $read = true): void
    {
        $deadline = microtime(true) + 3.0;
        $poll = Loop::repeat(0.005, function () use ($done, $deadline, $read): void {
            if ($read && \is_resource($this->client)) {
                $this->received .= (string) fread($this->client, 1 << 20);
            }
            if ($done() || microtime(true) > $deadline) {
                Loop::stop();
            }
        });
        Loop::run();
        Loop::cancel($poll);
        self::assertTrue($done(), 'the condition was met in time');
    }

    /** @return array{string, string} the head and the body (de-chunked when chunked) received so far */
    private function response(): array
    {
        [$head, $body] = explode("\r\n\r\n", $this->received, 2) + [1 => ''];
        if (str_contains(strtolower($head), 'transfer-encoding: chunked')) {
            $plain = '';
            while (preg_match('/^([0-9a-f]+)\r\n/', $body, $m) === 1 && \strlen($body) >= \strlen($m[0]) + hexdec($m[1]) + 2) {
                $plain .= substr($body, \strlen($m[0]), (int) hexdec($m[1]));
                $body = substr($body, \strlen($m[0]) + (int) hexdec($m[1]) + 2);
            }
            $body = $plain;
        }
        return [$head, $body];
    }

    private function parsed(): SseParser
    {
        $parser = new SseParser();
        $parser->feed($this->response()[1]);
        return $parser;
    }

    public function testTheStreamsHeadIsSentAndEventsFollowChunkedOnHttp11(): void
    {
        $this->serve();
        $this->send("GET /events HTTP/1.1\r\nHost: x\r\n\r\n");
        $this->runUntil(fn(): bool => \count($this->parsed()->events()) === 1);
        $this->streams[0]->send("two\nlines", 'update', '7');
        $this->runUntil(fn(): bool => \count($this->parsed()->events()) === 2);
        [$head] = $this->response();
        self::assertStringStartsWith('HTTP/1.1 200 OK', $head);
        self::assertStringContainsString("\r\nContent-Type: text/event-stream; charset=utf-8", $head);
        self::assertStringContainsString("\r\nCache-Control: no-cache", $head);
        self::assertStringContainsString("\r\nX-Accel-Buffering: no", $head);
        self::assertStringContainsString("\r\nTransfer-Encoding: chunked", $head);
        self::assertSame([
            ['event' => 'message', 'data' => 'first', 'id' => ''],
            ['event' => 'update', 'data' => "two\nlines", 'id' => '7'],
        ], $this->parsed()->events());
    }

    public function testClosingTheStreamFinishesTheResponseAndTheConnectionServesTheNextRequest(): void
    {
        $this->serve();
        $this->send("GET /events HTTP/1.1\r\nHost: x\r\n\r\n");
        $this->runUntil(fn(): bool => $this->streams !== [] && $this->streams[0]->isStarted());
        $this->streams[0]->close();
        self::assertSame(['closed'], $this->closed);
        $this->runUntil(fn(): bool => str_ends_with($this->received, "0\r\n\r\n"));
        $this->received = '';
        $this->send("GET /plain HTTP/1.1\r\nHost: x\r\n\r\n");
        $this->runUntil(fn(): bool => str_ends_with($this->received, 'plain'));
        self::assertStringStartsWith('HTTP/1.1 200 OK', $this->received);
        self::assertSame(2, $this->context->served);
    }

    public function testOnHttp10TheStreamIsTheBodyUntilTheConnectionCloses(): void
    {
        $this->serve();
        $this->send("GET /events HTTP/1.0\r\n\r\n");
        $this->runUntil(fn(): bool => \count($this->parsed()->events()) === 1);
        self::assertStringNotContainsStringIgnoringCase('transfer-encoding', $this->response()[0]);
        $this->streams[0]->close();
        $client = $this->client;
        \assert(\is_resource($client));
        $this->runUntil(static fn(): bool => feof($client));
        self::assertSame("data: first\n\n", $this->response()[1]);
    }

    public function testAClientThatLeavesEndsItsStreamAndLaterSendsFail(): void
    {
        $this->serve();
        $this->send("GET /events HTTP/1.1\r\nHost: x\r\n\r\n");
        $this->runUntil(fn(): bool => $this->streams !== [] && $this->streams[0]->isStarted());
        self::assertSame(1, $this->context->counts['sse'] ?? null);
        \assert(\is_resource($this->client));
        fclose($this->client);
        $this->runUntil(fn(): bool => $this->closed === ['closed'], read: false);
        self::assertFalse($this->streams[0]->send('nobody is there'));
        self::assertSame(0, $this->context->counts['sse'] ?? null, 'kiln status sees the stream gone');
        self::assertSame(1, $this->context->served, 'the response is counted once it ended');
    }

    public function testAHeadRequestGetsTheHeadOnlyAndTheStreamNeverStarts(): void
    {
        $this->serve();
        $this->send("HEAD /events HTTP/1.1\r\nHost: x\r\n\r\n");
        $this->runUntil(fn(): bool => $this->closed === ['closed'] && str_contains($this->received, "\r\n\r\n"));
        self::assertFalse($this->streams[0]->isStarted());
        self::assertStringEndsWith("\r\n\r\n", $this->received, 'no body, no chunk');
    }

    public function testAQuietStreamGetsHeartbeatsAndABusyOneDoesNot(): void
    {
        $this->serve(new Limits(sseHeartbeat: 0.2));
        $this->send("GET /events HTTP/1.1\r\nHost: x\r\n\r\n");
        $this->runUntil(fn(): bool => \count($this->parsed()->comments()) >= 2);
        self::assertSame(['heartbeat', 'heartbeat'], \array_slice($this->parsed()->comments(), 0, 2));
        self::assertCount(1, $this->parsed()->events());
    }

    public function testAClientThatReadsTooSlowlyIsDisconnectedAndLogged(): void
    {
        $this->serve(new Limits(writeBuffer: 4096));
        $this->send("GET /events HTTP/1.1\r\nHost: x\r\n\r\n");
        $this->runUntil(fn(): bool => $this->streams !== [] && $this->streams[0]->isStarted());
        $stream = $this->streams[0];
        $event = str_repeat('x', 65536);
        $sent = 0;
        $writer = Loop::repeat(0.001, static function () use ($stream, $event, &$sent): void {
            if ($sent < 2000 && $stream->send($event)) {
                $sent++;
            }
        });
        $this->runUntil(fn(): bool => $this->closed === ['closed'], read: false); // the client reads nothing
        Loop::cancel($writer);
        self::assertLessThan(2000, $sent);
        self::assertFalse($stream->send('more'));
        self::assertCount(1, array_filter($this->context->logged, static fn(string $line): bool => str_contains($line, 'reads too slowly')));
    }

    public function testADrainEndsOpenStreams(): void
    {
        $this->serve();
        $this->send("GET /events HTTP/1.1\r\nHost: x\r\n\r\n");
        $this->runUntil(fn(): bool => $this->streams !== [] && $this->streams[0]->isStarted());
        $drained = false;
        \assert($this->server !== null);
        $this->server->drain(static function () use (&$drained): void {
            $drained = true;
        });
        $this->runUntil(function () use (&$drained): bool {
            return $drained && str_ends_with($this->received, "0\r\n\r\n");
        });
        self::assertSame(['closed'], $this->closed);
    }
}
