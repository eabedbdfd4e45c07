<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Http\Internal;

use Kiln\Http\Internal\Connection;
use Kiln\Http\Internal\ResponseSender;
use Kiln\Http\Request;
use Kiln\Http\Response;
use Kiln\Http\Wire\RequestHead;
use Kiln\Http\Wire\ResponseEncoder;
use Kiln\Loop\Loop;

/** ResponseSender puts a Response on a connection whose other end is a socket pair the test reads. */
final class ResponseSenderTest extends CoreTestCase
{
    private Connection $connection;

    /** @var resource */
    private mixed $client;

    protected function setUp(): void
    {
        parent::setUp();
        $core = $this->core(static fn(): Response => Response::text('unused'));
        $this->client = $this->connect($core);
        $this->connection = $core->connections()[1];
    }

    public function testAStringBodyLeavesWithItsLengthInOneWrite(): void
    {
        [$result, $received] = $this->send(Response::text('hello'), keepAlive: true);
        self::assertSame([true, 5, 200], $result);
        self::assertStringStartsWith("HTTP/1.1 200 OK\r\n", $received);
        self::assertStringContainsString("Content-Length: 5\r\n", $received);
        self::assertStringEndsWith("\r\n\r\nhello", $received);
    }

    public function testAHeadRequestGetsTheHeadWithTheBodysLengthAndNoBody(): void
    {
        [$result, $received] = $this->send(Response::text('hello'), method: 'HEAD');
        self::assertSame([true, 0, 200], $result);
        self::assertStringContainsString("Content-Length: 5\r\n", $received);
        self::assertStringEndsWith("\r\n\r\n", $received);
    }

    public function testAnIterableBodyIsChunkedOnHttp11AndEmptyPiecesAreSkipped(): void
    {
        [$result, $received] = $this->send(new Response(200, [], ['ab', '', 'cde']));
        self::assertSame([true, 5, 200], $result);
        self::assertStringContainsString("Transfer-Encoding: chunked\r\n", $received);
        self::assertStringEndsWith("\r\n\r\n2\r\nab\r\n3\r\ncde\r\n0\r\n\r\n", $received);
    }

    public function testAnIterableBodyOnHttp10EndsWithTheConnection(): void
    {
        [$result, $received] = $this->send(new Response(200, [], ['ab', 'cde']), version: '1.0');
        self::assertSame([false, 5, 200], $result, 'close-delimited: the connection cannot stay open');
        self::assertStringNotContainsString('chunked', $received);
        self::assertStringEndsWith("\r\n\r\nabcde", $received);
    }

    public function testAnIterableBodyWithADeclaredLengthIsSentWithItNotChunked(): void
    {
        [$result, $received] = $this->send(new Response(200, ['Content-Length' => '5'], ['ab', 'cde']), version: '1.0');
        self::assertSame([true, 5, 200], $result, 'framed by its length: the connection stays open, on HTTP/1.0 too');
        self::assertStringContainsString("Content-Length: 5\r\n", $received);
        self::assertStringNotContainsString('chunked', $received);
        self::assertStringEndsWith("\r\n\r\nabcde", $received);

        [$result, $received] = $this->send(new Response(200, ['Content-Length' => '7'], []), method: 'HEAD');
        self::assertSame([true, 0, 200], $result);
        self::assertStringContainsString("Content-Length: 7\r\n", $received, 'HEAD: the declared length, no body');
        self::assertStringEndsWith("\r\n\r\n", $received);
    }

    public function testAnIterableBodyPastItsDeclaredLengthIsCutThereAndOneShortOfItEndsTheConnection(): void
    {
        $rest = false;
        $long = (static function () use (&$rest): \Generator {
            yield 'abc';
            yield 'defg';
            $rest = true;
        })();
        [$result, $received] = $this->send(new Response(200, ['Content-Length' => '5'], $long));
        self::assertSame([true, 5, 200], $result);
        self::assertStringEndsWith("\r\n\r\nabcde", $received);
        self::assertTrue($rest, 'the body is read to its end (the script runs on)');
        self::assertSame(['warning: GET /x declared Content-Length: 5 and its body went on for 2 bytes more: those were not sent'], $this->context->logs);

        [$result, $received] = $this->send(new Response(200, ['Content-Length' => '9'], ['abc']));
        self::assertSame([false, 3, 200], $result, 'short: the connection ends, the client sees the message is incomplete');
        self::assertStringEndsWith("\r\n\r\nabc", $received);
    }

    public function testAFileStreamIsSentWithItsLengthFromWhereItStandsAndClosed(): void
    {
        $file = tmpfile();
        self::assertIsResource($file);
        fwrite($file, 'skip:the rest');
        fseek($file, 5);
        [$result, $received] = $this->send(new Response(200, [], $file));
        self::assertSame([true, 8, 200], $result);
        self::assertStringContainsString("Content-Length: 8\r\n", $received);
        self::assertStringEndsWith("\r\n\r\nthe rest", $received);
        self::assertFalse(\is_resource($file), 'the stream is closed once sent');
    }

    public function testALargeBodyWaitsForTheClientToReadAndThenArrivesWhole(): void
    {
        $body = str_repeat('0123456789abcdef', 1 << 16); // 1 MiB: far more than a socket pair holds
        $file = tmpfile();
        self::assertIsResource($file);
        fwrite($file, $body);
        rewind($file);
        [$result, $received] = $this->send(new Response(200, [], $file));
        self::assertSame([true, \strlen($body), 200], $result);
        $start = strpos($received, "\r\n\r\n");
        self::assertNotFalse($start);
        self::assertTrue(substr($received, $start + 4) === $body, 'the whole body, in order, and nothing more');
    }

    public function testAResponseItCannotSendBecomesA500AndIsLogged(): void
    {
        [$result, $received] = $this->send(new Response(101, [], ''), keepAlive: true);
        self::assertSame([false, 26, 500], $result);
        self::assertStringStartsWith("HTTP/1.1 500 Internal Server Error\r\n", $received);
        self::assertSame(['error: Refused response for GET /x: status 101 is interim, not a final response (101 needs setUpgrade())'], $this->context->logs);
    }

    /**
     * Sends $response in a Fiber (a streamed body may wait for the client), reading the client's end meanwhile.
     *
     * @return array{array{bool, int, int}, string} what send() returned, and what the client received
     */
    private function send(Response $response, bool $keepAlive = true, string $method = 'GET', string $version = '1.1'): array
    {
        $head = new RequestHead($method, '/x', $version, [], '/x', '', 'test', 0, 0, $version === '1.1', false);
        $request = new Request($head, '', null, '192.0.2.7', 40000);
        $sender = new ResponseSender(new ResponseEncoder(), $this->context);
        $result = null;
        Loop::async(function () use ($sender, $request, $response, $keepAlive, &$result): void {
            $result = $sender->send($this->connection, $request, $response, $keepAlive);
            $this->connection->output->send(); // what waits for the loop turn's batch
        });
        $received = $this->receive($this->client, function () use (&$result): bool {
            return $result !== null && $this->connection->output->pending() === 0;
        });
        while (\is_string($more = fread($this->client, 1 << 20)) && $more !== '') {
            $received .= $more;
        }
        self::assertNotNull($result, 'send() returned');
        return [$result, $received];
    }
}
