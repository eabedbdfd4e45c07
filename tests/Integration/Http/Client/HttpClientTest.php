<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Http\Client;

use Kiln\Http\Client\ClientException;
use Kiln\Http\Client\ClientOptions;
use Kiln\Http\Client\ClientRequest;
use Kiln\Http\Client\HttpClient;
use Kiln\Loop\DeferredCancellation;

use function Kiln\Loop\delay;

use Kiln\Loop\Loop;
use Kiln\Loop\TimeoutException;

/** Requests, responses and protocol handling against the misbehaving fixture server. */
final class HttpClientTest extends ClientTestCase
{
    private string $base = '';

    protected function setUp(): void
    {
        parent::setUp();
        $this->base = $this->startServer();
    }

    public function testTotalTimeoutRaisesTimeoutExceptionWithinBounds(): void
    {
        $client = new HttpClient(new ClientOptions(timeout: 0.3));
        [$error, $elapsed] = $this->inLoop(function () use ($client): array {
            $started = \microtime(true);
            try {
                $client->get("{$this->base}/never");
            } catch (TimeoutException $e) {
                return [$e, \microtime(true) - $started];
            }

            return [null, 0.0];
        });
        self::assertInstanceOf(TimeoutException::class, $error);
        self::assertStringContainsString('timed out after 0.3 s', $error->getMessage());
        self::assertGreaterThanOrEqual(0.29, $elapsed);
        self::assertLessThan(1.0, $elapsed);
    }

    public function testPerRequestTimeoutAndCallerCancellationAreHonoured(): void
    {
        $client = new HttpClient();
        $this->inLoop(function () use ($client): void {
            try {
                $client->request(new ClientRequest('GET', "{$this->base}/never", timeout: 0.1));
                self::fail('Expected a timeout');
            } catch (TimeoutException) {
            }
            $cancel = new DeferredCancellation();
            Loop::delay(0.05, static fn() => $cancel->cancel());
            try {
                $client->request(new ClientRequest('GET', "{$this->base}/never"), $cancel->getCancellation());
                self::fail('Expected a cancellation');
            } catch (\Kiln\Loop\CancelledException $e) {
                self::assertNotInstanceOf(TimeoutException::class, $e);
            }
            // The timed-out connections were closed, not pooled: the next request works on a new one.
            self::assertSame('hello', $client->get("{$this->base}/hello")->body());
        });
    }

    public function testChunkedBodyWithExtensionsAndTrailersIsDecoded(): void
    {
        $client = new HttpClient();
        $this->inLoop(function () use ($client): void {
            $response = $client->get("{$this->base}/chunked");
            self::assertSame('hello world', $response->body());
            self::assertSame(['x-checksum' => ['42']], $response->trailers());
        });
    }

    public function testResponseWrittenOneByteAtATimeIsParsed(): void
    {
        $client = new HttpClient();
        $this->inLoop(function () use ($client): void {
            $response = $client->get("{$this->base}/bytewise");
            self::assertSame(200, $response->status());
            self::assertSame('OK', $response->reason());
            self::assertSame('bytes', $response->header('x-test'));
            self::assertSame('byte by byte!', $response->body());
        });
    }

    public function testStreamedBodyPiecesArriveBeforeTheResponseCompletes(): void
    {
        $client = new HttpClient();
        $arrivals = $this->inLoop(function () use ($client): array {
            $response = $client->get("{$this->base}/slow");
            $started = \microtime(true);
            $arrivals = [];
            foreach ($response->stream() as $piece) {
                $arrivals[] = [$piece, \microtime(true) - $started, $response->isComplete()];
            }
            self::assertTrue($response->isComplete());

            return $arrivals;
        });
        self::assertSame("piece1\n", $arrivals[0][0]);
        self::assertFalse($arrivals[0][2], 'The first piece must be yielded while the response is still incomplete');
        self::assertLessThan(0.3, $arrivals[0][1], 'The first piece must not wait for the rest (sent 0.6 s later)');
        self::assertGreaterThan(0.45, $arrivals[\count($arrivals) - 1][1]);
        self::assertSame("piece1\npiece2\npiece3\npiece4\npiece5\n", \implode('', \array_column($arrivals, 0)));
    }

    public function testStreamedRequestBodyIsSentChunked(): void
    {
        $client = new HttpClient();
        $echo = $this->inLoop(function () use ($client): array {
            $pieces = (static function () {
                yield 'one,';
                delay(0.01);
                yield '';
                yield 'two';
            })();
            $response = $client->request(new ClientRequest('PUT', "{$this->base}/echo?x=1", ['X-Custom' => ['a', 'b']], $pieces));

            return \json_decode($response->body(), true, flags: \JSON_THROW_ON_ERROR);
        });
        self::assertSame('PUT', $echo['method']);
        self::assertSame('/echo?x=1', $echo['target']);
        self::assertSame('one,two', $echo['body']);
        self::assertSame('chunked', $echo['headers']['transfer-encoding']);
        self::assertSame('kiln', $echo['headers']['user-agent']);
        self::assertSame("127.0.0.1:{$this->port}", $echo['headers']['host']);
    }

    public function testPostSendsContentLength(): void
    {
        $client = new HttpClient(new ClientOptions(headers: ['User-Agent' => 'test']));
        $echo = $this->inLoop(fn(): array => \json_decode($client->post("{$this->base}/echo", 'a=1', ['Content-Type' => 'text/plain'])->body(), true, flags: \JSON_THROW_ON_ERROR));
        self::assertSame(['POST', 'a=1', '3', 'test'], [$echo['method'], $echo['body'], $echo['headers']['content-length'], $echo['headers']['user-agent']]);
    }

    public function testRedirectsAreReturnedAsIsByDefaultAndFollowedWhenEnabled(): void
    {
        $this->inLoop(function (): void {
            $plain = (new HttpClient())->get("{$this->base}/redirect?to=/hello");
            self::assertSame(302, $plain->status());
            $plain->discard();
            $following = new HttpClient(new ClientOptions(maxRedirects: 3));
            $response = $following->post("{$this->base}/redirect?status=303&to=/echo", 'data');
            $echo = \json_decode($response->body(), true, flags: \JSON_THROW_ON_ERROR);
            self::assertSame(['GET', ''], [$echo['method'], $echo['body']]);
            self::assertSame("{$this->base}/echo", $response->url());
            $kept = $following->post("{$this->base}/redirect?status=307&to=echo", 'data');
            self::assertSame('data', \json_decode($kept->body(), true, flags: \JSON_THROW_ON_ERROR)['body']);
            try {
                $following->get("{$this->base}/loop");
                self::fail('A redirect loop must stop');
            } catch (ClientException $e) {
                self::assertStringContainsString('Too many redirects', $e->getMessage());
            }
        });
    }

    public function testInterimResponsesNoContentAndHeadAreHandled(): void
    {
        $client = new HttpClient();
        $this->inLoop(function () use ($client): void {
            self::assertSame('final', $client->get("{$this->base}/interim")->body());
            $empty = $client->get("{$this->base}/nocontent");
            self::assertSame([204, ''], [$empty->status(), $empty->body()]);
            $head = $client->request(new ClientRequest('HEAD', "{$this->base}/hello"));
            self::assertSame(['5', ''], [$head->header('content-length'), $head->body()]);
            self::assertSame('hello', $client->get("{$this->base}/hello")->body());
        });
    }

    public function testBodyOverTheLimitIsRefusedButCanBeStreamed(): void
    {
        $client = new HttpClient(new ClientOptions(maxBodyBytes: 1000));
        $this->inLoop(function () use ($client): void {
            try {
                $client->get("{$this->base}/big?n=5000")->body();
                self::fail('Expected the body limit to apply');
            } catch (ClientException $e) {
                self::assertStringContainsString('larger than 1000 bytes', $e->getMessage());
            }
            $total = 0;
            foreach ($client->get("{$this->base}/big?n=200000")->stream() as $piece) {
                $total += \strlen($piece);
            }
            self::assertSame(200000, $total);
        });
    }

    public function testRefusedConnectionRaisesClientException(): void
    {
        $this->inLoop(function (): void {
            $this->expectException(ClientException::class);
            (new HttpClient())->get('http://127.0.0.1:1/');
        });
    }
}
