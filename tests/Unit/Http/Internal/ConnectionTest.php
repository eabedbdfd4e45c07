<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Http\Internal;

use Kiln\Http\Internal\ConnectionState;
use Kiln\Http\Request;
use Kiln\Http\Response;
use Kiln\Loop\Loop;

/** A Connection fed through a socket pair: what arrives in pieces, what is refused, what the client closes. */
final class ConnectionTest extends CoreTestCase
{
    public function testARequestArrivingOneByteAtATimeIsServedOnce(): void
    {
        $core = $this->core(static fn(Request $request): Response => Response::text($request->method() . ' ' . $request->body()));
        $client = $this->connect($core);
        $bytes = "POST /form HTTP/1.1\r\nHost: test\r\nContent-Length: 5\r\n\r\nhello";
        $sent = 0;
        $feeder = Loop::repeat(0.0005, static function () use ($client, $bytes, &$sent): void {
            if ($sent < \strlen($bytes)) {
                fwrite($client, $bytes[$sent++]);
            }
        });
        $received = $this->receive($client, static fn(string $b): bool => self::bodies($b) !== []);
        Loop::cancel($feeder);
        self::assertSame(\strlen($bytes), $sent);
        self::assertSame(['POST hello'], self::bodies($received));
        self::assertSame(1, $this->context->served);
    }

    public function testAMalformedRequestIsAnswered400AndTheConnectionCloses(): void
    {
        $core = $this->core(static fn(): Response => Response::text('never'));
        $client = $this->connect($core);
        fwrite($client, "GET / HTTP/1.1\r\nHost: test\r\nBad Header\r\n\r\n" . self::request('/after'));
        $received = $this->receive($client, static fn(string $b): bool => false);
        self::assertStringStartsWith("HTTP/1.1 400 Bad Request\r\n", $received);
        self::assertStringNotContainsString('never', $received, 'nothing after it is read');
        self::assertTrue(feof($client));
        self::assertSame(0, $core->connectionCount());
        self::assertSame(0, $this->context->served);
    }

    public function testExpectContinueIsAnsweredBeforeTheBodyIsSent(): void
    {
        $core = $this->core(static fn(Request $request): Response => Response::text('got ' . $request->body()));
        $client = $this->connect($core);
        fwrite($client, "PUT /f HTTP/1.1\r\nHost: test\r\nContent-Length: 4\r\nExpect: 100-continue\r\n\r\n");
        $interim = $this->receive($client, static fn(string $b): bool => str_contains($b, "\r\n\r\n"));
        self::assertSame("HTTP/1.1 100 Continue\r\n\r\n", $interim);
        fwrite($client, 'data');
        self::assertSame(['got data'], self::bodies($this->receive($client, static fn(string $b): bool => str_ends_with($b, 'got data'))));
    }

    public function testAfterTheClientHalfClosesWhatItPipelinedIsStillAnsweredThenTheConnectionCloses(): void
    {
        $core = $this->core(static fn(Request $request): Response => Response::text($request->path()));
        $client = $this->connect($core);
        fwrite($client, self::request('/one') . self::request('/two'));
        stream_socket_shutdown($client, STREAM_SHUT_WR);
        $received = $this->receive($client, static fn(string $b): bool => false);
        self::assertSame(['/one', '/two'], self::bodies($received));
        self::assertTrue(feof($client));
        self::assertSame(0, $core->connectionCount());
    }

    public function testAnUpgradeHandsTheSocketAndTheBytesPastTheRequestOver(): void
    {
        $takenOver = [];
        $core = $this->core(static function () use (&$takenOver): Response {
            $response = new Response(101, ['Upgrade' => 'echo', 'Connection' => 'Upgrade']);
            $response->setUpgrade(static function (mixed $socket, string $rest) use (&$takenOver): void {
                $takenOver[] = [\is_resource($socket), $rest];
            });
            return $response;
        });
        $client = $this->connect($core);
        $connection = $core->connections()[1];
        fwrite($client, self::request('/ws', "Upgrade: echo\r\nConnection: Upgrade\r\n") . 'early frame');
        $received = $this->receive($client, static function (string $b) use (&$takenOver): bool {
            return $takenOver !== [];
        });
        self::assertStringStartsWith("HTTP/1.1 101 Switching Protocols\r\n", $received);
        self::assertSame([[true, 'early frame']], $takenOver);
        self::assertSame(ConnectionState::Detached, $connection->state);
        self::assertSame(0, $core->connectionCount(), 'HTTP no longer owns it');
    }
}
