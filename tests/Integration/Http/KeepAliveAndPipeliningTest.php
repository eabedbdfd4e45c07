<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Http;

final class KeepAliveAndPipeliningTest extends ServerTestCase
{
    public function testManyRequestsShareOneKeepAliveConnection(): void
    {
        $client = $this->client();
        for ($i = 0; $i < 5; $i++) {
            $client->send(self::get('/hello'));
            $response = $client->readResponse();
            self::assertNotNull($response);
            self::assertSame(200, $response['status']);
            self::assertSame('Hello, World!', $response['body']);
            self::assertArrayHasKey('date', $response['headers']);
        }
        $client->close();
    }

    public function testPipelinedRequestsAreAnsweredInOrder(): void
    {
        $client = $this->client();
        $client->send(self::get('/target?n=1') . self::get('/hello') . self::get('/target?n=3')
            . "POST /echo HTTP/1.1\r\nHost: localhost\r\nContent-Length: 5\r\n\r\nfifth" . self::get('/json'));
        $bodies = [];
        for ($i = 0; $i < 5; $i++) {
            $response = $client->readResponse();
            self::assertNotNull($response);
            self::assertSame(200, $response['status']);
            $bodies[] = $response['body'];
        }
        self::assertStringContainsString('n=1', $bodies[0]);
        self::assertSame('Hello, World!', $bodies[1]);
        self::assertStringContainsString('n=3', $bodies[2]);
        self::assertSame('fifth', $bodies[3]);
        self::assertStringContainsString('Hello', $bodies[4]);
        $client->close();
    }

    public function testALongPipelineInOneWriteIsFullyAnswered(): void
    {
        $client = $this->client();
        $client->send(str_repeat(self::get('/hello'), 200));
        for ($i = 0; $i < 200; $i++) {
            $response = $client->readResponse();
            self::assertNotNull($response, "response $i missing");
            self::assertSame(200, $response['status']);
        }
        $client->close();
    }

    public function testConnectionCloseIsHonoured(): void
    {
        $client = $this->client();
        $client->send(self::get('/hello', "Connection: close\r\n"));
        $response = $client->readResponse();
        self::assertNotNull($response);
        self::assertSame('close', $response['headers']['connection'][0] ?? null);
        self::assertTrue($client->isClosedWithin(2.0));
    }

    public function testHttp10ClosesUnlessKeepAliveIsAsked(): void
    {
        $client = $this->client();
        $client->send("GET /hello HTTP/1.0\r\n\r\n");
        $response = $client->readResponse();
        self::assertNotNull($response);
        self::assertSame(200, $response['status']);
        self::assertStringStartsWith('HTTP/1.', $response['raw']);
        self::assertTrue($client->isClosedWithin(2.0));

        $client = $this->client();
        $client->send("GET /hello HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
        $response = $client->readResponse();
        self::assertNotNull($response);
        self::assertSame('keep-alive', strtolower($response['headers']['connection'][0] ?? ''));
        $client->send("GET /hello HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
        self::assertNotNull($client->readResponse());
        $client->close();
    }

    public function testAProtocolSwitchHandsTheSocketAndEarlyBytesToTheNewProtocol(): void
    {
        $client = $this->client();
        $client->send(self::get('/upgrade', "Connection: Upgrade\r\nUpgrade: echo\r\n") . 'early');
        $raw = '';
        $deadline = microtime(true) + 5.0;
        while (!str_contains($raw, 'echo:early') && microtime(true) < $deadline) {
            $r = [$client->socket()];
            $w = $e = null;
            if (stream_select($r, $w, $e, 0, 100000) > 0) {
                $raw .= (string) fread($client->socket(), 8192);
            }
        }
        self::assertStringStartsWith("HTTP/1.1 101 Switching Protocols\r\n", $raw);
        self::assertStringContainsString("\r\nUpgrade: echo\r\n", $raw);
        self::assertStringNotContainsStringIgnoringCase('content-length', $raw);
        self::assertStringEndsWith("\r\n\r\necho:early", $raw, 'bytes sent after the request belong to the new protocol');
        fwrite($client->socket(), 'more');
        $reply = '';
        while (!str_contains($reply, 'echo:more') && microtime(true) < $deadline) {
            $r = [$client->socket()];
            $w = $e = null;
            if (stream_select($r, $w, $e, 0, 100000) > 0) {
                $reply .= (string) fread($client->socket(), 8192);
            }
        }
        self::assertSame('echo:more', $reply);
        $client->close();
    }

    public function testHeadGetsHeadersWithoutBody(): void
    {
        $client = $this->client();
        $client->send("HEAD /hello HTTP/1.1\r\nHost: localhost\r\n\r\n" . self::get('/hello'));
        $head = $client->readResponse(5.0, true);
        self::assertNotNull($head);
        self::assertSame(200, $head['status']);
        self::assertSame('13', $head['headers']['content-length'][0] ?? null);
        $next = $client->readResponse();
        self::assertNotNull($next);
        self::assertSame('Hello, World!', $next['body'], 'a HEAD response must carry no body bytes');
        $client->close();
    }

    public function testNoBodyStatusesCarryNoFraming(): void
    {
        foreach ([204, 304] as $code) {
            $response = $this->exchange(self::get("/status?code=$code", "Connection: close\r\n"));
            self::assertSame($code, $response['status']);
            self::assertArrayNotHasKey('content-length', $response['headers']);
            self::assertArrayNotHasKey('transfer-encoding', $response['headers']);
        }
    }

    public function testStreamedResponseUsesChunkedEncoding(): void
    {
        $response = $this->exchange(self::get('/stream?n=5&size=3'));
        self::assertSame('chunked', $response['headers']['transfer-encoding'][0] ?? null);
        self::assertSame('aaabbbcccdddeee', $response['body']);
    }

    public function testStreamedResponseToHttp10IsCloseDelimited(): void
    {
        $client = $this->client();
        $client->send("GET /stream?n=3&size=2 HTTP/1.0\r\n\r\n");
        $raw = $client->readUntilClosed();
        self::assertStringNotContainsStringIgnoringCase('transfer-encoding', $raw);
        self::assertStringEndsWith("\r\n\r\naabbcc", $raw);
    }

    public function testExpectContinueGetsInterimResponse(): void
    {
        $client = $this->client();
        $client->send("POST /echo HTTP/1.1\r\nHost: localhost\r\nContent-Length: 4\r\nExpect: 100-continue\r\n\r\n");
        $interim = $client->readResponse();
        self::assertNotNull($interim);
        self::assertSame(100, $interim['status']);
        $client->send('ping');
        $final = $client->readResponse();
        self::assertNotNull($final);
        self::assertSame(200, $final['status']);
        self::assertSame('ping', $final['body']);
        $client->close();
    }

    public function testChunkedUploadIsDecoded(): void
    {
        $client = $this->client();
        $client->send("POST /echo HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n");
        foreach (['hel', 'lo ', 'world'] as $piece) {
            $client->send(dechex(\strlen($piece)) . ";ext=1\r\n$piece\r\n");
        }
        $client->send("0\r\nX-Trailer: yes\r\n\r\n");
        $response = $client->readResponse();
        self::assertNotNull($response);
        self::assertSame('hello world', $response['body']);
        $client->close();
    }

    public function testUncaughtExceptionIsA500AndTheWorkerKeepsServing(): void
    {
        $client = $this->client();
        $client->send(self::get('/throw') . self::get('/hello'));
        $error = $client->readResponse();
        self::assertNotNull($error);
        self::assertSame(500, $error['status']);
        self::assertStringNotContainsString('boom', $error['body'], 'no internals leak to the client');
        $next = $client->readResponse();
        self::assertNotNull($next);
        self::assertSame(200, $next['status']);
        $client->close();
        self::assertStringContainsString('boom', $this->server()->waitForLog('/boom/', 5.0));
    }

    public function testHeaderInjectionByTheAppIsRefused(): void
    {
        $response = $this->exchange(self::get('/bad-header', "Connection: close\r\n"));
        self::assertSame(500, $response['status']);
        self::assertArrayNotHasKey('set-cookie', $response['headers']);
        self::assertStringNotContainsString('evil', $response['raw']);
    }

    public function testUnknownPathIs404AndWrongMethodIs405(): void
    {
        self::assertSame(404, $this->exchange(self::get('/nope'))['status']);
        $response = $this->exchange("DELETE /hello HTTP/1.1\r\nHost: x\r\n\r\n");
        self::assertSame(405, $response['status']);
        self::assertStringContainsString('GET', $response['headers']['allow'][0] ?? '');
        $custom = $this->exchange("BREW /hello HTTP/1.1\r\nHost: x\r\n\r\n");
        self::assertSame(405, $custom['status'], 'a well-formed unknown method reaches the app');
    }
}
