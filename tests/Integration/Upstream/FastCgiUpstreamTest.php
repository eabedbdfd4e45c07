<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Upstream;

use Kiln\Http\Request;
use Kiln\Http\RequestHandler;
use Kiln\Http\Response;
use Kiln\Isolation\FastCgi\FastCgiAddress;
use Kiln\Isolation\FastCgi\FastCgiClient;
use Kiln\Isolation\FastCgi\FastCgiException;
use Kiln\Isolation\FastCgi\FastCgiOptions;
use Kiln\Site\Upstream\FastCgiUpstream;
use Kiln\Site\Upstream\FastCgiUpstreamMap;
use Kiln\Tests\Integration\FastCgi\FakeServerTestCase;
use Kiln\Tests\Support\PeerProcess;

/** The upstream runner against the fake responder: CGI response to HTTP response, and every failure's status. */
final class FastCgiUpstreamTest extends FakeServerTestCase
{
    /** @var list<array{string, string}> */
    private array $logged = [];

    public function testStatusHeadersAndEveryCookieOfTheCgiResponseAreKept(): void
    {
        $output = "Status: 201 Created\r\nSet-Cookie: a=1\r\nSet-Cookie: b=2; Path=/\r\nContent-Type: text/plain\r\n"
            . "Content-Length: 4\r\nConnection: close\r\nX-Custom: yes\r\n\r\nbody";
        $response = $this->serve('cgi', ['Fake-Output' => \base64_encode($output)]);
        self::assertSame(201, $response->status());
        self::assertSame(['a=1', 'b=2; Path=/'], $response->headers()['Set-Cookie']);
        self::assertSame('text/plain', $response->header('content-type'));
        self::assertSame('yes', $response->header('x-custom'));
        self::assertSame(4, $response->declaredLength(), 'kept: the server frames a streamed body by it, a whole one by its own length');
        self::assertFalse($response->hasHeader('connection'), 'Hop-by-hop fields are not forwarded');
        self::assertSame('body', $response->body());
    }

    public function testParamsAreTheCgiMetaVariablesOfTheRequest(): void
    {
        $response = $this->serve('echo', ['X-Thing' => 'v'], 'POST', '/app.php?x=1', 'payload');
        $echo = self::json($response);
        self::assertSame('/srv/www/app.php', $echo['params']['SCRIPT_FILENAME']);
        self::assertSame(['POST', 'x=1', '7', 'v'], [$echo['params']['REQUEST_METHOD'], $echo['params']['QUERY_STRING'], $echo['params']['CONTENT_LENGTH'], $echo['params']['HTTP_X_THING']]);
        self::assertSame([7, \md5('payload')], [$echo['stdin_length'], $echo['stdin_md5']]);
    }

    public function testSpooledBodyIsStreamedFromItsFile(): void
    {
        $big = \random_bytes(5 * 1024 * 1024);
        $file = \tmpfile();
        self::assertIsResource($file);
        \fwrite($file, $big);
        \rewind($file);
        $echo = self::json($this->serve('echo', [], 'PUT', '/app.php', $file));
        self::assertSame([\strlen($big), \md5($big)], [$echo['stdin_length'], $echo['stdin_md5']]);
    }

    public function testSmallPageThatCameWithItsHeadIsOneString(): void
    {
        $response = $this->serveRaw('cgi', ['Fake-Output' => \base64_encode("Content-Type: text/html\r\n\r\n<p>hi</p>")]);
        self::assertSame('<p>hi</p>', $response->body());
    }

    public function testLongBodyIsStreamedAsItArrives(): void
    {
        $address = FastCgiAddress::parse($this->startFake('chunks'));
        $this->inLoop(function () use ($address): void {
            $response = $this->runner(FastCgiUpstreamMap::single($address))->run(
                UpstreamRequests::make('GET', '/app.php', ['Fake-Chunks' => '300', 'Fake-Chunk-Size' => '1000']),
                UpstreamRequests::script('/srv/www', '/app.php'),
            );
            $body = $response->body();
            self::assertInstanceOf(\Generator::class, $body);
            $pieces = 0;
            $all = '';
            foreach ($body as $piece) {
                $pieces++;
                $all .= $piece;
            }
            self::assertGreaterThan(200, $pieces, 'Past what came with the head, one piece per STDOUT record');
            self::assertSame(300_000, \strlen($all));
        });
    }

    public function testUnreachableResponderIs502(): void
    {
        $this->inLoop(function (): void {
            $map = FastCgiUpstreamMap::single(FastCgiAddress::tcp('127.0.0.1', PeerProcess::freePort()));
            $response = $this->runner($map)->run(UpstreamRequests::make(), UpstreamRequests::script('/srv/www', '/app.php'));
            self::assertSame(502, $response->status());
        });
        self::assertStringContainsString('Cannot connect', $this->logged[0][1]);
    }

    public function testNoResponseHeadWithinTheTimeLimitIs504AndTheRequestIsAborted(): void
    {
        $response = $this->serve('hang', [], 'GET', '/app.php', '', 0.3);
        self::assertSame(504, $response->status());
        $this->inLoop(fn(): string => $this->awaitEvent('/^abort 1 1$/'));
        self::assertStringContainsString('time limit of 0.3 s', $this->logged[0][1]);
    }

    public function testSilenceLongerThanTheReadTimeoutIs504(): void
    {
        $response = $this->serve('hang', [], 'GET', '/app.php', '', 0.0, new FastCgiOptions(readTimeout: 0.3));
        self::assertSame(504, $response->status());
    }

    public function testOverloadedResponderIs503WithRetryAfter(): void
    {
        $response = $this->serve('overloaded');
        self::assertSame([503, '5'], [$response->status(), $response->header('retry-after')]);
    }

    public function testMalformedCgiResponseIs502(): void
    {
        self::assertSame(502, $this->serve('malformed-cgi')->status());
        self::assertSame(502, $this->serve('cgi', ['Fake-Output' => \base64_encode('')])->status(), 'No output at all');
        self::assertSame(502, $this->serve('garbage')->status(), 'Not FastCGI at all');
        self::assertSame(502, $this->serve('close-before')->status());
    }

    public function testResponseCutShortEndsTheStreamWithAnError(): void
    {
        $address = FastCgiAddress::parse($this->startFake('close-mid'));
        $this->inLoop(function () use ($address): void {
            $response = $this->runner(FastCgiUpstreamMap::single($address))->run(UpstreamRequests::make(), UpstreamRequests::script('/srv/www', '/app.php'));
            self::assertSame(200, $response->status());
            $this->expectException(FastCgiException::class);
            UpstreamRequests::body($response->body());
        });
    }

    public function testStderrLinesAreLoggedWithTheRequestId(): void
    {
        $address = FastCgiAddress::parse($this->startFake('stderr'));
        $this->inLoop(function () use ($address): void {
            $request = UpstreamRequests::make();
            $request->setAttribute('request_id', 'req-42');
            $response = $this->runner(FastCgiUpstreamMap::single($address))->run($request, UpstreamRequests::script('/srv/www', '/app.php'));
            self::assertSame('body more', UpstreamRequests::body($response->body()));
        });
        self::assertCount(3, $this->logged);
        self::assertSame('warning', $this->logged[0][0]);
        self::assertMatchesRegularExpression('~^fastcgi /app\.php \[req-42\] \(127\.0\.0\.1:\d+\) stderr: PHP Warning:  first line$~', $this->logged[0][1]);
    }

    public function testLocalRedirectIsDispatchedAgainAsAGet(): void
    {
        $output = \base64_encode("Location: /other.php?b=2\r\n\r\n");
        $seen = null;
        $handler = new class ($seen) implements RequestHandler {
            public function __construct(public ?Request &$seen) {}

            public function handle(Request $request): Response
            {
                $this->seen = $request;

                return Response::text('redirected');
            }
        };
        $address = FastCgiAddress::parse($this->startFake('cgi'));
        $this->inLoop(function () use ($address, $handler, $output): void {
            $script = UpstreamRequests::script('/srv/www', '/app.php');
            $runner = new FastCgiUpstream(FastCgiUpstreamMap::single($address), new FastCgiClient(), $this->logger(), 5.0, $handler);
            $response = $runner->run(UpstreamRequests::make('POST', '/app.php', ['Fake-Output' => $output], 'x'), $script);
            self::assertSame('redirected', $response->body());
            $plain = $this->runner(FastCgiUpstreamMap::single($address))->run(UpstreamRequests::make('GET', '/app.php', ['Fake-Output' => $output]), $script);
            self::assertSame([302, '/other.php?b=2'], [$plain->status(), $plain->header('location')]);
        });
        self::assertNotNull($seen);
        self::assertSame(['GET', '/other.php', 'b=2', ''], [$seen->method(), $seen->path(), $seen->queryString(), $seen->body()]);
    }

    public function testEachExtensionGoesToItsOwnResponder(): void
    {
        $php = FastCgiAddress::parse($this->startFake('echo'));
        $python = FastCgiAddress::parse($this->startFake('cgi'));
        $this->inLoop(function () use ($php, $python): void {
            $runner = $this->runner(new FastCgiUpstreamMap($php, ['py' => $python]));
            $request = UpstreamRequests::make('GET', '/', ['Fake-Output' => \base64_encode("Content-Type: text/plain\r\n\r\nfrom python")]);
            self::assertSame('from python', $runner->run($request, UpstreamRequests::script('/srv/www', '/app.py'))->body());
            self::assertStringContainsString('"SCRIPT_FILENAME":"/srv/www/index.php"', UpstreamRequests::body($runner->run($request, UpstreamRequests::script('/srv/www', '/index.php'))->body()));
            $only = $this->runner(new FastCgiUpstreamMap(null, ['.py' => $python]))->run($request, UpstreamRequests::script('/srv/www', '/index.php'));
            self::assertSame(502, $only->status(), 'No responder for .php');
        });
    }

    /** @param array<string, string> $headers */
    private function serveRaw(string $scenario, array $headers): Response
    {
        $address = FastCgiAddress::parse($this->startFake($scenario));

        return $this->inLoop(fn(): Response => $this->runner(FastCgiUpstreamMap::single($address))
            ->run(UpstreamRequests::make('GET', '/app.php', $headers), UpstreamRequests::script('/srv/www', '/app.php')));
    }

    /**
     * @param array<string, string> $headers
     * @param string|resource $body
     */
    private function serve(string $scenario, array $headers = [], string $method = 'GET', string $target = '/app.php', mixed $body = '', float $timeLimit = 5.0, ?FastCgiOptions $options = null): Response
    {
        $address = FastCgiAddress::parse($this->startFake($scenario));

        return $this->inLoop(function () use ($address, $headers, $method, $target, $body, $timeLimit, $options): Response {
            $response = $this->runner(FastCgiUpstreamMap::single($address), $timeLimit, $options)
                ->run(UpstreamRequests::make($method, $target, $headers, $body), UpstreamRequests::script('/srv/www', '/app.php'));
            $response->setBody(UpstreamRequests::body($response->body()));

            return $response;
        });
    }

    private function runner(FastCgiUpstreamMap $map, float $timeLimit = 5.0, ?FastCgiOptions $options = null): FastCgiUpstream
    {
        return new FastCgiUpstream($map, new FastCgiClient($options ?? new FastCgiOptions()), $this->logger(), $timeLimit);
    }

    /** @return \Closure(string, string): void */
    private function logger(): \Closure
    {
        return function (string $level, string $message): void {
            $this->logged[] = [$level, $message];
        };
    }

    /** @return array{params: array<string, string>, stdin_length: int, stdin_md5: string} */
    private static function json(Response $response): array
    {
        /** @var array{params: array<string, string>, stdin_length: int, stdin_md5: string} */
        return \json_decode(UpstreamRequests::body($response->body()), true, 512, \JSON_THROW_ON_ERROR);
    }
}
