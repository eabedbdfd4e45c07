<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Sequential;

/** What a script sees of its request: the superglobals, php://input, its directory, a fresh response. */
final class SuperglobalsTest extends SequentialTestCase
{
    public function testAGetRequestFillsGetCookieRequestAndServerAsPhpFpmDoes(): void
    {
        $dump = self::json($this->get('/dump.php?a=1&list[]=x&list[]=y', ['Cookie' => 'plain=va%20l+x; a.b=dotted; arr[k]=v; plain=second; bare']));
        self::assertSame(['a' => '1', 'list' => ['x', 'y']], $dump['get']);
        self::assertSame(['plain' => 'va l+x', 'a_b' => 'dotted', 'arr' => ['k' => 'v'], 'bare' => ''], $dump['cookie'], 'parsed as PHP does: raw-url-decoded, first value wins');
        self::assertSame(['a' => '1', 'list' => ['x', 'y']], $dump['request'], 'request_order GP: no cookies');
        self::assertSame([], $dump['post']);
        self::assertSame([], $dump['files']);
        self::assertSame([], $dump['env'], 'variables_order without E');
        $server = $dump['server'];
        self::assertIsArray($server);
        self::assertSame('GET', $server['REQUEST_METHOD']);
        self::assertSame('/dump.php', $server['SCRIPT_NAME']);
        self::assertSame('/dump.php', $server['PHP_SELF']);
        self::assertSame('a=1&list[]=x&list[]=y', $server['QUERY_STRING']);
        self::assertSame('/dump.php?a=1&list[]=x&list[]=y', $server['REQUEST_URI']);
        self::assertStringEndsWith('/Fixtures/sequential/public/dump.php', (string) $server['SCRIPT_FILENAME']);
        self::assertSame('test', $server['HTTP_HOST']);
        self::assertIsInt($server['REQUEST_TIME']);
        self::assertEqualsWithDelta(time(), $server['REQUEST_TIME'], 5);
        self::assertIsFloat($server['REQUEST_TIME_FLOAT']);
        self::assertArrayNotHasKey('argv', $server);
        self::assertArrayNotHasKey('argc', $server);
        self::assertSame('', $dump['input']);
    }

    public function testAScriptStartsLikeAnFpmRequestInItsOwnDirectoryWithNoGlobalsAndAFreshResponse(): void
    {
        $dump = self::json($this->get('/dump.php'));
        self::assertStringEndsWith('/Fixtures/sequential/public', (string) $dump['cwd']);
        self::assertNotContains('argv', $dump['globals'], 'the CLI\'s $argv is not a global of a script');
        self::assertNotContains('argc', $dump['globals']);
        self::assertSame(1, $dump['ob_level'], 'one output buffer, as php-fpm with output_buffering');
        self::assertFalse($dump['headers_sent']);
        self::assertSame(200, $dump['status']);
        self::assertTrue($dump['error_handler'], 'no error handler is set when a script starts');

        $where = self::json($this->get('/sub/where.php'));
        self::assertStringEndsWith('/public/sub', (string) $where['cwd']);
        self::assertTrue($where['relative'], 'relative paths resolve from the script\'s directory');
    }

    public function testAnUrlencodedPostFillsPostAndRequestAndPhpInputHoldsTheBody(): void
    {
        $input = self::json($this->request('POST', '/input.php?a=from-get&q=1', ['Content-Type' => 'application/x-www-form-urlencoded'], 'a=from-post&b%5B%5D=2'));
        self::assertSame('a=from-post&b%5B%5D=2', $input['input']);
        self::assertSame('a=from-post&b%5B%5D=2', $input['again'], 'php://input can be read twice');
        self::assertSame(['a' => 'from-post', 'b' => ['2']], $input['post']);

        $dump = self::json($this->request('POST', '/dump.php?a=from-get&q=1', ['Content-Type' => 'application/x-www-form-urlencoded'], 'a=from-post'));
        self::assertSame(['a' => 'from-post', 'q' => '1'], $dump['request'], 'POST overrides GET in $_REQUEST');
    }

    public function testAJsonPutLeavesPostEmptyAndPhpInputHoldsTheBodyOnEveryRequest(): void
    {
        $first = self::json($this->request('PUT', '/input.php', ['Content-Type' => 'application/json'], '{"x":1}'));
        self::assertSame('{"x":1}', $first['input']);
        self::assertSame([], $first['post']);
        $urlencodedPut = self::json($this->request('PUT', '/input.php', ['Content-Type' => 'application/x-www-form-urlencoded'], 'a=1'));
        self::assertSame([], $urlencodedPut['post'], 'PHP fills $_POST for POST only');
        self::assertSame('a=1', $urlencodedPut['input']);
        self::assertSame('', self::json($this->get('/input.php'))['input'], 'the next request does not see the previous body');
    }

    public function testABodyLargerThanMemoryIsReadThroughPhpInput(): void
    {
        $body = str_repeat('0123456789abcdef', 256 * 1024); // 4 MiB: spooled to a temporary file
        $input = self::json($this->request('PUT', '/input.php', ['Content-Type' => 'application/octet-stream'], $body, 15.0));
        self::assertSame(\strlen($body), \strlen((string) $input['input']));
        self::assertSame(md5($body), md5((string) $input['input']));
    }

    public function testAMultipartPostFillsFilesInPhpsNativeShapeAndLeavesPhpInputEmpty(): void
    {
        [$type, $body] = self::multipart([
            ['field', '', 'value'],
            ['doc', 'a.txt', 'hello'],
            ['many[x][]', 'b.txt', 'bee'],
            ['many[x][]', 'c.txt', 'sea'],
            ['empty', '', ''],
        ]);
        $dump = self::json($this->request('POST', '/dump.php', ['Content-Type' => $type], $body));
        self::assertSame(['field' => 'value', 'empty' => ''], $dump['post']);
        self::assertSame('', $dump['input'], 'php://input is empty for multipart/form-data, as in PHP');
        $files = $dump['files'];
        self::assertIsArray($files);
        self::assertSame(['name', 'full_path', 'type', 'tmp_name', 'error', 'size'], array_keys($files['doc']));
        self::assertSame('a.txt', $files['doc']['name']);
        self::assertSame('text/plain', $files['doc']['type']);
        self::assertSame(0, $files['doc']['error']);
        self::assertSame(5, $files['doc']['size']);
        self::assertNotSame('', $files['doc']['tmp_name']);
        self::assertSame(['name', 'full_path', 'type', 'tmp_name', 'error', 'size'], array_keys($files['many']));
        self::assertSame(['x' => ['b.txt', 'c.txt']], $files['many']['name']);
        self::assertSame(['x' => [3, 3]], $files['many']['size']);
        self::assertSame(['x' => [0, 0]], $files['many']['error']);
    }

    public function testAMalformedFormBodyIsA400AndTheWorkerServesOn(): void
    {
        $pid = $this->workerPid();
        $response = $this->request('POST', '/dump.php', ['Content-Type' => 'multipart/form-data; boundary=x'], "--x\r\nnot a part");
        self::assertSame(400, $response['status']);
        self::assertSame($pid, $this->workerPid());
    }

    public function testTopLevelVariablesAreGlobalsAndDoNotSurviveTheRequest(): void
    {
        self::assertSame('connection:1;in GLOBALS;no this', $this->get('/globals.php')['body']);
        self::assertSame('connection:1;in GLOBALS;no this', $this->get('/globals.php')['body'], 'a fresh $counter on the next request');
        $globals = self::json($this->get('/dump.php'))['globals'];
        self::assertNotContains('counter', $globals);
        self::assertNotContains('db', $globals);
    }

    public function testAScriptThatOverwritesAWorkerGlobalDoesNotLeakItIntoTheNextRequest(): void
    {
        $before = self::json($this->get('/dump.php'))['globals'];
        self::assertSame('overwritten', $this->get('/overwrite.php')['body']);
        self::assertSame($before, self::json($this->get('/dump.php'))['globals']);
        self::assertSame('no leak', $this->get('/overwrite.php?check=1')['body']);
    }
}
