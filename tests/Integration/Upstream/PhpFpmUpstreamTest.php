<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Upstream;

use Kiln\Http\Response;
use Kiln\Isolation\FastCgi\FastCgiAddress;
use Kiln\Isolation\FastCgi\FastCgiClient;
use Kiln\Isolation\FastCgi\FastCgiOptions;

use function Kiln\Loop\async;
use function Kiln\Loop\await;

use Kiln\Site\Upstream\FastCgiUpstream;
use Kiln\Site\Upstream\FastCgiUpstreamMap;
use Kiln\Tests\Integration\FastCgi\FakeServerTestCase;
use Kiln\Tests\Support\PhpFpmProcess;

/** The upstream runner against a real php-fpm 8.2 (TCP and unix socket, 2 static children). */
final class PhpFpmUpstreamTest extends FakeServerTestCase
{
    private const SCRIPTS = [
        'dump.php' => '<?php header("Content-Type: application/json"); echo json_encode(["method" => $_SERVER["REQUEST_METHOD"], "get" => $_GET, "query" => $_SERVER["QUERY_STRING"], "uri" => $_SERVER["REQUEST_URI"], "script" => $_SERVER["SCRIPT_NAME"], "host" => $_SERVER["HTTP_HOST"] ?? null, "pid" => getmypid()]);',
        'upload.php' => '<?php $in = file_get_contents("php://input"); echo json_encode(["length" => strlen($in), "md5" => md5($in), "content_length" => $_SERVER["CONTENT_LENGTH"], "type" => $_SERVER["CONTENT_TYPE"]]);',
        'created.php' => '<?php http_response_code(201); header("X-Test: kiln"); setcookie("a", "1"); setcookie("b", "2", ["path" => "/x"]); echo "created";',
        'teapot.php' => '<?php header("HTTP/1.1 418 I am a teapot"); echo "short and stout";',
        'moved.php' => '<?php header("Location: /elsewhere"); ',
        'stream.php' => '<?php while (ob_get_level() > 0) { ob_end_flush(); } for ($i = 0; $i < 5; $i++) { echo "part $i\n"; flush(); usleep(20000); }',
        'warn.php' => '<?php error_log("something bad happened"); echo "ok";',
    ];

    private static ?PhpFpmProcess $fpm = null;
    private static string $root = '';

    /** @var list<array{string, string}> */
    private array $logged = [];
    /** One client per test, as one per worker: its kept connections (at most 2) fit php-fpm's 2 children. */
    private ?FastCgiClient $client = null;

    public static function setUpBeforeClass(): void
    {
        if (!\is_executable(PhpFpmProcess::BINARY)) {
            self::fail('php-fpm8.2 is not installed (apt-get install php8.2-fpm): scripts/install-deps.sh installs it');
        }
        self::$fpm = PhpFpmProcess::start(children: 2, tcp: true, unix: true, ini: ['post_max_size' => '64M']);
        self::$root = self::$fpm->directory() . '/www';
        \mkdir(self::$root, 0o755);
        foreach (self::SCRIPTS as $name => $code) {
            \file_put_contents(self::$root . '/' . $name, $code);
            \chmod(self::$root . '/' . $name, 0o644);
        }
    }

    public static function tearDownAfterClass(): void
    {
        self::$fpm?->stop();
        self::$fpm = null;
    }

    protected function tearDown(): void
    {
        $this->client?->closeIdleConnections();
        $this->client = null;
        parent::tearDown();
    }

    public function testGetWithAQueryReachesTheScript(): void
    {
        $response = $this->serve(UpstreamRequests::make('GET', '/dump.php?name=kiln&list[]=1&list[]=2'), 'dump.php');
        self::assertSame(200, $response->status());
        self::assertSame('application/json', $response->header('content-type'));
        $dump = self::json($response);
        self::assertSame(['GET', ['name' => 'kiln', 'list' => ['1', '2']], '/dump.php', 'localhost:8080'], [$dump['method'], $dump['get'], $dump['script'], $dump['host']]);
        self::assertSame('/dump.php?name=kiln&list[]=1&list[]=2', $dump['uri']);
    }

    public function testLargePostBodyIsStreamedFromItsSpoolFile(): void
    {
        $big = \random_bytes(6 * 1024 * 1024 + 3);
        $file = \tmpfile();
        self::assertIsResource($file);
        \fwrite($file, $big);
        \rewind($file);
        $request = UpstreamRequests::make('POST', '/upload.php', ['Content-Type' => 'application/octet-stream'], $file);
        $dump = self::json($this->serve($request, 'upload.php'));
        self::assertSame([\strlen($big), \md5($big), (string) \strlen($big), 'application/octet-stream'], [$dump['length'], $dump['md5'], $dump['content_length'], $dump['type']]);
    }

    public function testStatusHeadersAndEveryCookieComeThrough(): void
    {
        $response = $this->serve(UpstreamRequests::make('GET', '/created.php'), 'created.php');
        self::assertSame([201, 'kiln', 'created'], [$response->status(), $response->header('x-test'), $response->body()]);
        self::assertSame(['a=1', 'b=2; path=/x'], $response->headers()['Set-Cookie']);
        $teapot = $this->serve(UpstreamRequests::make('GET', '/teapot.php'), 'teapot.php');
        self::assertSame([418, 'short and stout'], [$teapot->status(), $teapot->body()]);
        $moved = $this->serve(UpstreamRequests::make('GET', '/moved.php'), 'moved.php');
        self::assertSame([302, '/elsewhere'], [$moved->status(), $moved->header('location')]);
    }

    public function testMissingScriptIsPhpFpmsOwn404(): void
    {
        $response = $this->serve(UpstreamRequests::make('GET', '/nope.php'), 'nope.php');
        self::assertSame(404, $response->status());
    }

    public function testOutputFlushedByTheScriptIsStreamedInPieces(): void
    {
        $this->inLoop(function (): void {
            $response = $this->runner(self::tcp())->run(UpstreamRequests::make('GET', '/stream.php'), UpstreamRequests::script(self::$root, '/stream.php'));
            $body = $response->body();
            self::assertInstanceOf(\Generator::class, $body);
            $pieces = \iterator_to_array($body, false);
            self::assertGreaterThan(1, \count($pieces));
            self::assertSame("part 0\npart 1\npart 2\npart 3\npart 4\n", \implode('', $pieces));
        });
    }

    public function testUnixSocketListenerServesTheSameScripts(): void
    {
        \assert(self::$fpm !== null);
        $address = FastCgiAddress::unix(self::$fpm->socketPath());
        $response = $this->serve(UpstreamRequests::make('GET', '/dump.php?via=unix'), 'dump.php', $address);
        self::assertSame(['via' => 'unix'], self::json($response)['get']);
    }

    public function testManySequentialRequestsReuseOneKeptConnection(): void
    {
        $client = new FastCgiClient(new FastCgiOptions(maxConnections: 2));
        $pids = $this->inLoop(function () use ($client): array {
            $runner = new FastCgiUpstream(FastCgiUpstreamMap::single(self::tcp()), $client, $this->logger());
            $pids = [];
            for ($i = 0; $i < 40; $i++) {
                $response = $runner->run(UpstreamRequests::make('GET', "/dump.php?i={$i}"), UpstreamRequests::script(self::$root, '/dump.php'));
                /** @var array{get: array{i: string}, pid: int} $dump */
                $dump = self::json($response);
                self::assertSame((string) $i, $dump['get']['i']);
                $pids[$dump['pid']] = true;
            }
            $client->closeIdleConnections();

            return $pids;
        });
        self::assertSame(1, $client->openedConnections(), 'One kept connection served all 40 requests');
        self::assertCount(1, $pids, 'A kept connection stays with one php-fpm child');
    }

    public function testConcurrentRequestsShareAFewConnections(): void
    {
        $client = new FastCgiClient(new FastCgiOptions(maxConnections: 2));
        $this->inLoop(function () use ($client): void {
            $runner = new FastCgiUpstream(FastCgiUpstreamMap::single(self::tcp()), $client, $this->logger());
            $futures = [];
            for ($i = 0; $i < 12; $i++) {
                $futures[] = async(static fn(): Response => $runner->run(UpstreamRequests::make('GET', "/stream.php?i={$i}"), UpstreamRequests::script(self::$root, '/stream.php')));
            }
            foreach ($futures as $future) {
                self::assertSame("part 0\npart 1\npart 2\npart 3\npart 4\n", UpstreamRequests::body(await($future)->body()));
            }
            $client->closeIdleConnections();
        }, 20.0);
        self::assertSame(2, $client->openedConnections());
    }

    public function testScriptErrorLogIsLoggedAsStderr(): void
    {
        $request = UpstreamRequests::make('GET', '/warn.php');
        $request->setAttribute('request_id', 'abc123');
        self::assertSame('ok', $this->serve($request, 'warn.php')->body());
        $lines = \array_column($this->logged, 1);
        self::assertNotEmpty(\preg_grep('~^fastcgi /warn\.php \[abc123\] \(127\.0\.0\.1:\d+\) stderr: .*something bad happened~', $lines), \implode("\n", $lines));
    }

    public function testPhpGoesToPhpFpmAndPythonToAnotherResponder(): void
    {
        $python = FastCgiAddress::parse($this->startFake('cgi'));
        $this->inLoop(function () use ($python): void {
            $runner = $this->runner(new FastCgiUpstreamMap(self::tcp(), ['.py' => $python]));
            $output = \base64_encode("Content-Type: text/plain\r\n\r\nhello from python");
            $py = $runner->run(UpstreamRequests::make('GET', '/app.py', ['Fake-Output' => $output]), UpstreamRequests::script(self::$root, '/app.py'));
            self::assertSame('hello from python', $py->body());
            $php = $runner->run(UpstreamRequests::make('GET', '/dump.php?x=1'), UpstreamRequests::script(self::$root, '/dump.php'));
            self::assertSame(['x' => '1'], self::json($php)['get']);
        });
    }

    private function serve(\Kiln\Http\Request $request, string $script, ?FastCgiAddress $address = null): Response
    {
        return $this->inLoop(function () use ($request, $script, $address): Response {
            $response = $this->runner($address ?? self::tcp())->run($request, UpstreamRequests::script(self::$root, '/' . $script));
            $response->setBody(UpstreamRequests::body($response->body()));

            return $response;
        });
    }

    private function runner(FastCgiAddress|FastCgiUpstreamMap $to): FastCgiUpstream
    {
        $this->client ??= new FastCgiClient(new FastCgiOptions(maxConnections: 2));

        return new FastCgiUpstream($to instanceof FastCgiUpstreamMap ? $to : FastCgiUpstreamMap::single($to), $this->client, $this->logger());
    }

    private static function tcp(): FastCgiAddress
    {
        \assert(self::$fpm !== null);

        return FastCgiAddress::tcp('127.0.0.1', self::$fpm->port());
    }

    /** @return \Closure(string, string): void */
    private function logger(): \Closure
    {
        return function (string $level, string $message): void {
            $this->logged[] = [$level, $message];
        };
    }

    /** @return array<string, mixed> */
    private static function json(Response $response): array
    {
        $body = $response->body();
        self::assertIsString($body);
        /** @var array<string, mixed> */
        return \json_decode($body, true, 512, \JSON_THROW_ON_ERROR);
    }
}
