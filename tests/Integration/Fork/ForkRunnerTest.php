<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Fork;

use Kiln\Tests\Support\KilnPerClass;
use Kiln\Tests\Support\KilnProcess;
use Kiln\Tests\Support\PeerProcess;
use Kiln\Tests\Support\RawClient;
use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;

/** The fork tier through a real server: each request in a child of the worker's fork server. */
final class ForkRunnerTest extends TestCase
{
    use KilnPerClass {
        tearDownAfterClass as stopServer;
    }

    private const APP = __DIR__ . '/fixture/app.php';

    /** The children's upload_tmp_dir: PHP spills a php://input past 16 KiB to a file there. */
    private static string $tmp = '';

    public static function setUpBeforeClass(): void
    {
        self::$tmp = \sys_get_temp_dir() . '/kiln-fork-tmp-' . \getmypid() . '-' . \bin2hex(\random_bytes(4));
        \mkdir(self::$tmp);
        self::$server = KilnProcess::start(self::APP, ['--workers=1'], ['KILN_TEST_FORK_MAX' => '2', 'KILN_TEST_FORK_TIMEOUT' => '1.5', 'KILN_TEST_FORK_TMP' => self::$tmp]);
    }

    public static function tearDownAfterClass(): void
    {
        self::stopServer();
        foreach (\glob(self::$tmp . '/*') ?: [] as $file) {
            @\unlink($file);
        }
        @\rmdir(self::$tmp);
    }

    public function testTheForkServerDoesNotHoldTheWorkersConnections(): void
    {
        $kept = RawClient::to($this->server());
        $kept->send("GET /route HTTP/1.1\r\nHost: x\r\n\r\n");
        self::assertNotNull($kept->readResponse());
        self::assertSame(200, $this->get('/state.php')['status'], 'the fork server runs (started now if first)');
        $kept->send("GET /route HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        self::assertNotNull($kept->readResponse());
        self::assertTrue($kept->isClosedWithin(2.0), 'the close reaches the client: no other process holds the connection');
        $kept->close();
    }

    public function testEveryRequestStartsFromAFreshState(): void
    {
        $first = $this->json('/state.php');
        $second = $this->json('/state.php');
        $fresh = ['constant' => false, 'function' => false, 'class' => false, 'global' => null, 'ini' => (string) \ini_get('precision'), 'counter' => 2, 'static' => 1];
        self::assertSame($fresh, \array_diff_key($first, ['pid' => 0]));
        self::assertSame($fresh, \array_diff_key($second, ['pid' => 0]), 'a define(), a function, a class, a static and a global of the first request are gone');
        self::assertNotSame($first['pid'], $second['pid']);
    }

    public function testHeadersStillCountAfterTheScriptEndsTheBufferBeforeAnyOutput(): void
    {
        $response = $this->get('/end-buffer.php');
        self::assertSame(302, $response['status']);
        self::assertSame('/elsewhere', $response['headers']['location'] ?? null);
        self::assertSame('1', $response['headers']['x-before'] ?? null);
        self::assertSame('1', $response['headers']['x-after-end'] ?? null);
        self::assertSame('moved', $response['body']);
    }

    public function testOutputPrintedAfterTheBufferEndedFollowsTheHead(): void
    {
        $response = $this->get('/flush-then-print.php');
        self::assertSame(200, $response['status']);
        self::assertSame('first,then at level 0', $response['body']);
        self::assertArrayNotHasKey('x-too-late', $response['headers'], 'as under php-fpm: the head left with the first byte');
    }

    public function testAShutdownFunctionThatCallsExitStillGetsTheResponseOut(): void
    {
        $response = $this->get('/shutdown-exit.php');
        self::assertSame(200, $response['status']);
        self::assertSame('main body then the shutdown function', $response['body']);
        self::assertSame('exited', $response['headers']['x-shutdown'] ?? null);
    }

    public function testThePhpIniSettingsReachEveryChild(): void
    {
        self::assertSame(['memory_limit' => '77M'], $this->json('/ini.php'));
    }

    public function testScriptsHaveTheWorkersMemoryLimitWhenThePhpIniSettingsGiveNone(): void
    {
        // Debian's CLI php.ini sets none; kiln serve gives its processes 4 x --max-memory (256M).
        self::assertSame(['memory_limit' => '1G'], $this->json('/plain/ini.php'));
    }

    public function testStatusHeadersCookiesAndTheRequestReachTheScript(): void
    {
        $body = 'x=1&y%5B%5D=2';
        $client = RawClient::to($this->server());
        $client->send("POST /headers.php?q=a+b HTTP/1.1\r\nHost: x\r\nCookie: c=3; d=4\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: " . \strlen($body) . "\r\n\r\n$body");
        $response = $client->readResponse();
        $client->close();
        self::assertNotNull($response);
        self::assertSame(201, $response['status']);
        self::assertSame(['yes'], $response['headers']['x-fork']);
        self::assertSame(['a=1', 'b=2; HttpOnly'], $response['headers']['set-cookie']);
        self::assertSame(['text/plain; charset=utf-8'], $response['headers']['content-type']);
        self::assertSame(
            "method=POST get={\"q\":\"a b\"} post={\"x\":\"1\",\"y\":[\"2\"]} cookie={\"c\":\"3\",\"d\":\"4\"}\nscript=/headers.php cwd=www\n",
            $response['body'],
        );
    }

    public function testTheContentTypeAScriptSetIsSpelledAsApacheSendsIt(): void
    {
        $client = RawClient::to($this->server());
        $client->send("GET /typed.php HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        $response = $client->readResponse();
        $client->close();
        self::assertNotNull($response);
        self::assertStringContainsString("\r\nContent-Type: text/plain;charset=UTF-8\r\n", $response['raw'], 'PHP writes `Content-type`');
    }

    public function testAHeadRequestRunsTheScriptToItsEndButSendsNoBody(): void
    {
        $file = \sys_get_temp_dir() . '/kiln-fork-head-' . \getmypid();
        @\unlink($file);
        $client = RawClient::to($this->server());
        $client->send("HEAD /touch.php?$file HTTP/1.1\r\nHost: x\r\n\r\n");
        $response = $client->readResponse(5.0, true);
        $client->close();
        self::assertNotNull($response);
        self::assertSame(200, $response['status']);
        self::assertSame('', $response['body']);
        $deadline = \microtime(true) + 3.0;
        while (!\is_file($file) && \microtime(true) < $deadline) {
            \usleep(10_000);
        }
        self::assertSame('done', @\file_get_contents($file), 'the script ran past its output');
        @\unlink($file);
    }

    public function testALocationHeaderIsARedirect(): void
    {
        $response = $this->get('/redirect.php');
        self::assertSame(302, $response['status']);
        self::assertSame('/elsewhere', $response['headers']['location']);
    }

    public function testExitEndsTheScriptAfterShutdownFunctionsAndKeepsItsOutput(): void
    {
        $response = $this->get('/exit.php');
        self::assertSame(200, $response['status']);
        self::assertSame('1', $response['headers']['x-before-exit']);
        self::assertSame("before exit\nshutdown ran\n", $response['body']);
    }

    public function testAFatalErrorIsA500WithTheOutputSoFarAndIsLogged(): void
    {
        $response = $this->get('/fatal.php');
        self::assertSame(500, $response['status']);
        self::assertSame("partial output\n", $response['body'], 'as php-fpm and php-cgi with display_errors off');
        $this->server()->waitForLog('/kiln_no_such_function/', 5.0);
        self::assertSame('a route', $this->get('/route')['body']);
    }

    public function testAScriptThatRunsOutOfMemoryGets500NotABadGateway(): void
    {
        self::assertSame(500, $this->get('/memory.php')['status'], 'as php-cgi: PHP answers its own fatal error');
        $this->server()->waitForLog('/fork: PHP Fatal error:  Allowed memory size of 16777216 bytes exhausted/', 5.0);
    }

    public function testAFatalErrorInAShutdownFunctionIsA500WithTheOutputSoFar(): void
    {
        $response = $this->get('/shutdown-fatal.php');
        self::assertSame(500, $response['status'], 'as php-cgi');
        self::assertSame('main in shutdown', $response['body']);
    }

    public function testAStatusTheScriptSetIsKeptAfterAFatalError(): void
    {
        $response = $this->get('/fatal-after-status.php');
        self::assertSame(404, $response['status'], 'PHP turns only a 200 into a 500');
        self::assertSame('not here', $response['body']);
    }

    public function testTheLoggedTraceOfAnUncaughtExceptionHasOnlyTheScriptsFrames(): void
    {
        $response = $this->get('/fatal-in-function.php');
        self::assertSame(500, $response['status']);
        self::assertSame('before the error', $response['body']);
        // One entry of the error log: the message and its trace, folded with " | ".
        $entry = $this->server()->waitForLog('/fork: PHP Fatal error:  Uncaught RuntimeException: kiln fork trace check/', 5.0);
        self::assertStringContainsString('[error]', $entry, 'at the level of PHP\'s prefix');
        $lines = \explode(' | ', (string) \preg_replace('/^.*? fork: /', '', $entry));
        $www = (string) \realpath(__DIR__ . '/fixture/www');
        self::assertSame([
            "PHP Fatal error:  Uncaught RuntimeException: kiln fork trace check in $www/fatal-in-function.php:12",
            'Stack trace:',
            "#0 $www/fatal-in-function.php(7): kiln_fork_inner()",
            "#1 $www/fatal-in-function.php(16): kiln_fork_outer()",
            '#2 {main}',
            "  thrown in $www/fatal-in-function.php on line 12",
        ], $lines, 'the trace ends where the script began, as under php-fpm: no frame of the fork server');
    }

    /** @return array<string, array{string, string, string}> */
    public static function bodies(): array
    {
        return [
            'a JSON POST' => ['POST', 'application/json', '{"a":1}'],
            'a text PUT' => ['PUT', 'text/plain', "put body\n"],
            'a PATCH' => ['PATCH', 'application/merge-patch+json', '{"b":null}'],
            'a DELETE with a body' => ['DELETE', 'application/octet-stream', "\x00\x01binary\xff"],
            'a POST without a content type' => ['POST', '', 'just bytes'],
        ];
    }

    #[DataProvider('bodies')]
    public function testPhpInputHoldsTheRequestBodyAndCanBeReadTwice(string $method, string $type, string $body): void
    {
        $input = $this->input($method, $type, $body);
        self::assertSame($method, $input['method']);
        self::assertSame(\bin2hex($body), $input['raw']);
        self::assertTrue($input['read_again'], 'php://input can be opened again and reads the whole body again');
        self::assertSame([], $input['post']);
    }

    public function testAnUrlencodedPostIsInPhpInputAndInPost(): void
    {
        $input = $this->input('POST', 'application/x-www-form-urlencoded', 'a=1&b%5B%5D=two+words');
        self::assertSame(\bin2hex('a=1&b%5B%5D=two+words'), $input['raw']);
        self::assertTrue($input['read_again']);
        self::assertSame(['a' => '1', 'b' => ['two words']], $input['post']);
    }

    public function testAMultipartFormIsNotInPhpInputAsUnderPhpFpm(): void
    {
        $boundary = 'kilnforkinput';
        $body = "--$boundary\r\nContent-Disposition: form-data; name=\"f\"; filename=\"a.txt\"\r\n\r\nfile\r\n--$boundary--\r\n";
        $input = $this->input('POST', "multipart/form-data; boundary=$boundary", $body);
        self::assertSame('', $input['raw']);
        self::assertSame(['f'], $input['files']);
    }

    public function testALargeBodyReachesPhpInputWholeAndLeavesNoFileBehind(): void
    {
        // ~5.4 MB: spooled to a file by the worker and by the fork server, and spilled to one by PHP in the child.
        $body = \str_repeat('{"k":"' . \bin2hex(\random_bytes(32)) . '"}' . "\n", 72_000);
        $input = $this->input('PUT', 'application/x-ndjson', $body, 20.0);
        self::assertSame(\strlen($body), $input['length']);
        self::assertSame(\md5($body), $input['md5']);
        self::assertTrue($input['read_again']);
        $deadline = \microtime(true) + 3.0;
        while (($left = \glob(self::$tmp . '/*') ?: []) !== [] && \microtime(true) < $deadline) {
            \usleep(20_000);
        }
        self::assertSame([], $left, 'the file PHP spilled php://input to is removed when the child ends');
    }

    public function testAChildThatDiesWithoutAResponseIsA502(): void
    {
        self::assertSame(502, $this->get('/crash.php')['status']);
        self::assertSame(200, $this->get('/state.php')['status'], 'the next request is served');
    }

    public function testALargeBodyIsStreamedWhole(): void
    {
        $response = $this->get('/big.php?n=200000', [], 20.0);
        self::assertSame(200, $response['status']);
        self::assertSame(2_000_000, \strlen($response['body']));
        self::assertSame(\str_pad('199999', 9, ' ', \STR_PAD_LEFT) . "\n", \substr($response['body'], -10));
    }

    public function testAnUploadArrivesInFilesAndIsAnUploadedFile(): void
    {
        $boundary = 'kilnforkboundary';
        $body = "--$boundary\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\nhello\r\n"
            . "--$boundary\r\nContent-Disposition: form-data; name=\"doc\"; filename=\"a.txt\"\r\nContent-Type: text/plain\r\n\r\nfile body\r\n"
            . "--$boundary--\r\n";
        $client = RawClient::to($this->server());
        $client->send("POST /upload.php HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=$boundary\r\nContent-Length: " . \strlen($body) . "\r\n\r\n$body");
        $response = $client->readResponse();
        $client->close();
        self::assertNotNull($response);
        self::assertSame(
            ['post' => ['title' => 'hello'], 'name' => 'a.txt', 'size' => 9, 'content' => 'file body', 'is_uploaded_file' => true, 'not_an_upload' => false],
            \json_decode($response['body'], true),
        );
    }

    public function testAScriptPastTheTimeLimitGets504AndItsChildIsKilled(): void
    {
        $file = \sys_get_temp_dir() . '/kiln-fork-hang-' . \getmypid() . '-' . \bin2hex(\random_bytes(4));
        try {
            $started = \microtime(true);
            $response = $this->get('/hang.php?' . $file, [], 10.0);
            self::assertSame(504, $response['status']);
            self::assertGreaterThanOrEqual(1.4, \microtime(true) - $started);
            $pid = (int) \file_get_contents($file);
            self::assertGreaterThan(0, $pid);
            $deadline = \microtime(true) + 3.0;
            while (PeerProcess::alive($pid) && \microtime(true) < $deadline) {
                \usleep(20_000);
            }
            self::assertFalse(PeerProcess::alive($pid), 'the child is gone');
        } finally {
            @\unlink($file);
        }
    }

    public function testAProgramTheScriptLeavesInTheBackgroundOutlivesTheRequestWithoutHoldingItsResponse(): void
    {
        $file = \sys_get_temp_dir() . '/kiln-fork-background-' . \getmypid() . '-' . \bin2hex(\random_bytes(4));
        try {
            $started = \microtime(true);
            $response = $this->get('/background.php?' . $file, [], 10.0);
            self::assertSame(200, $response['status']);
            self::assertSame('started', $response['body']);
            self::assertLessThan(0.8, \microtime(true) - $started, 'answered at once, not when the program ended');
            $deadline = \microtime(true) + 5.0;
            while (@\file_get_contents($file) !== "done\n" && \microtime(true) < $deadline) {
                \usleep(20_000);
            }
            self::assertSame("done\n", @\file_get_contents($file), 'the program ran to its end, as under php-fpm');
        } finally {
            @\unlink($file);
        }
    }

    public function testAFullSetOfChildrenAnswers503WithRetryAfter(): void
    {
        $this->waitForNoChildren();
        $first = $this->open('/slow.php?s=1');
        $second = $this->open('/slow.php?s=1');
        $this->readUntil($first, 'started', 5.0);
        $this->readUntil($second, 'started', 5.0);
        $refused = $this->get('/state.php');
        self::assertSame(503, $refused['status']);
        self::assertSame('1', $refused['headers']['retry-after']);
        $this->readUntil($first, "0\r\n\r\n", 5.0);
        $this->readUntil($second, "0\r\n\r\n", 5.0);
        \fclose($first);
        \fclose($second);
        self::assertSame(200, $this->get('/state.php')['status']);
    }

    public function testNoZombiesAreLeftBehind(): void
    {
        foreach (['/state.php', '/exit.php', '/fatal.php', '/crash.php'] as $target) {
            $this->get($target);
        }
        $this->waitForNoChildren();
    }

    private function waitForNoChildren(): void
    {
        $server = (int) $this->get('/fork-server-pid')['body'];
        self::assertGreaterThan(0, $server);
        $deadline = \microtime(true) + 3.0;
        while (($children = self::childrenOf($server)) !== [] && \microtime(true) < $deadline) {
            \usleep(20_000);
        }
        self::assertSame([], $children, 'every child of the fork server has been reaped');
    }

    /** @return list<string> "pid state" of each child process */
    private static function childrenOf(int $parent): array
    {
        $children = [];
        foreach (\glob('/proc/[0-9]*/stat') ?: [] as $file) {
            $stat = @\file_get_contents($file);
            if ($stat === false) {
                continue;
            }
            $fields = \explode(' ', \substr($stat, (int) \strrpos($stat, ')') + 2));
            if ((int) ($fields[1] ?? 0) === $parent) {
                $children[] = \basename(\dirname($file)) . ' ' . $fields[0];
            }
        }

        return $children;
    }

    /** @return array<mixed> what input.php saw */
    private function input(string $method, string $type, string $body, float $timeout = 5.0): array
    {
        $client = RawClient::to($this->server());
        $head = "$method /input.php HTTP/1.1\r\nHost: x\r\nConnection: close\r\n" . ($type === '' ? '' : "Content-Type: $type\r\n");
        $client->send($head . 'Content-Length: ' . \strlen($body) . "\r\n\r\n$body");
        $response = $client->readResponse($timeout);
        $client->close();
        self::assertNotNull($response);
        self::assertSame(200, $response['status'], $response['body']);
        $data = \json_decode($response['body'], true, flags: \JSON_THROW_ON_ERROR);
        self::assertIsArray($data);

        return $data;
    }

    /** @return array<mixed> */
    private function json(string $target): array
    {
        $response = $this->get($target);
        self::assertSame(200, $response['status'], $response['body']);
        $data = \json_decode($response['body'], true, flags: \JSON_THROW_ON_ERROR);
        self::assertIsArray($data);

        return $data;
    }
}
