<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\FastCgi;

use Kiln\Isolation\FastCgi\FastCgiAddress;
use Kiln\Isolation\FastCgi\FastCgiClient;
use Kiln\Isolation\FastCgi\FastCgiOptions;

use function Kiln\Loop\async;
use function Kiln\Loop\await;
use function Kiln\Loop\delay;

/** The client against a responder that fragments records and streams: what arrives, and how it is sent. */
final class FastCgiClientTest extends FakeServerTestCase
{
    public function testParamsAndBodyReachTheResponderAndStdoutComesBack(): void
    {
        $address = FastCgiAddress::parse($this->startFake());
        $this->inLoop(function () use ($address): void {
            $response = (new FastCgiClient())->request($address, self::params('POST', ['CONTENT_LENGTH' => '5']), 'hello');
            $body = $response->body();
            self::assertStringStartsWith("Content-Type: application/json\r\n", $body);
            $echo = self::json($body);
            self::assertSame('POST', $echo['params']['REQUEST_METHOD']);
            self::assertSame('a=1', $echo['params']['QUERY_STRING']);
            self::assertSame([5, \md5('hello'), true], [$echo['stdin_length'], $echo['stdin_md5'], $echo['keep']]);
            self::assertTrue($response->isComplete());
            self::assertSame(0, $response->wait()->appStatus);
        });
    }

    public function testRecordsSplitAtEveryByteAreReassembled(): void
    {
        $address = FastCgiAddress::parse($this->startFake('bytewise'));
        $this->inLoop(function () use ($address): void {
            $response = (new FastCgiClient())->request($address, self::params());
            $chunks = \iterator_to_array($response, false);
            self::assertSame('a=1', self::json(\implode('', $chunks))['params']['QUERY_STRING']);
            self::assertCount(2, $chunks, 'One chunk per STDOUT record, however the bytes were split');
        });
    }

    public function testStdoutInManyRecordsArrivesChunkByChunk(): void
    {
        $address = FastCgiAddress::parse($this->startFake('chunks'));
        $this->inLoop(function () use ($address): void {
            $response = (new FastCgiClient())->request($address, self::params('GET', ['FAKE_CHUNKS' => '500', 'FAKE_CHUNK_SIZE' => '100']));
            $chunks = [];
            foreach ($response as $chunk) {
                $chunks[] = $chunk;
            }
            self::assertCount(501, $chunks);
            self::assertSame(\str_pad('chunk 499 ', 100, '.'), $chunks[500]);
            self::assertSame(0, $response->wait()->appStatus);
        });
    }

    public function testBodyIsStreamedFromAStringAFileOrAGenerator(): void
    {
        $address = FastCgiAddress::parse($this->startFake());
        $this->inLoop(function () use ($address): void {
            $client = new FastCgiClient();
            $big = \random_bytes(3 * 1024 * 1024 + 17);
            $file = \tmpfile();
            self::assertIsResource($file);
            \fwrite($file, "skipped{$big}");
            \fseek($file, 7);
            $pieces = (static function () use ($big): \Generator {
                foreach (\str_split($big, 100_000) as $piece) {
                    yield $piece;
                    yield '';
                }
            })();
            foreach (['string' => $big, 'file from its position' => $file, 'generator' => $pieces] as $kind => $body) {
                $echo = self::json($client->request($address, self::params('POST'), $body)->body());
                self::assertSame([\strlen($big), \md5($big)], [$echo['stdin_length'], $echo['stdin_md5']], $kind);
            }
            $echo = self::json($client->request($address, self::params('GET'))->body());
            self::assertSame(0, $echo['stdin_length']);
        });
    }

    public function testKeptConnectionServesManySequentialRequests(): void
    {
        $address = FastCgiAddress::parse($this->startFake());
        $this->inLoop(function () use ($address): void {
            $client = new FastCgiClient();
            for ($i = 1; $i <= 25; $i++) {
                $echo = self::json($client->request($address, self::params())->body());
                self::assertSame([1, $i, true], [$echo['connection'], $echo['request'], $echo['keep']]);
            }
            self::assertSame(1, $client->openedConnections());
            self::assertSame(1, $client->idleConnections($address));
            $client->closeIdleConnections();
            self::assertSame(0, $client->openConnections($address));
        });
        $this->awaitEventOutsideLoop('/^eof 1$/');
    }

    public function testIdleKeptConnectionIsClosedAfterTheIdleTimeout(): void
    {
        $address = FastCgiAddress::parse($this->startFake());
        $this->inLoop(function () use ($address): void {
            $client = new FastCgiClient(new FastCgiOptions(idleTimeout: 0.2));
            $client->request($address, self::params())->body();
            self::assertSame(1, $client->idleConnections($address));
            $this->awaitEvent('/^eof 1$/');
            self::assertSame(0, $client->openConnections($address));
        });
    }

    public function testWithoutKeepConnEachRequestHasItsOwnConnection(): void
    {
        $address = FastCgiAddress::parse($this->startFake());
        $this->inLoop(function () use ($address): void {
            $client = new FastCgiClient(new FastCgiOptions(keepConnections: false));
            for ($i = 1; $i <= 3; $i++) {
                $echo = self::json($client->request($address, self::params())->body());
                self::assertSame([$i, 1, false], [$echo['connection'], $echo['request'], $echo['keep']]);
            }
            self::assertSame(0, $client->openConnections($address));
        });
    }

    public function testWithoutKeepUnrepeatableAPostGetsAConnectionOfItsOwnWhileGetsShareTheKeptOne(): void
    {
        $address = FastCgiAddress::parse($this->startFake());
        $this->inLoop(function () use ($address): void {
            $client = new FastCgiClient(new FastCgiOptions(keepUnrepeatable: false));
            $seen = [];
            foreach (['GET', 'POST', 'GET', 'PUT', 'POST', 'HEAD'] as $method) {
                $echo = self::json($client->request($address, self::params($method), $method === 'HEAD' ? '' : 'body')->body());
                $seen[] = [$method, $echo['connection'], $echo['keep']];
            }
            // The fake numbers connections in order: the kept one is 1, each POST opens one more.
            self::assertSame([['GET', 1, true], ['POST', 2, false], ['GET', 1, true], ['PUT', 1, true], ['POST', 3, false], ['HEAD', 1, true]], $seen);
            $stream = fopen('php://memory', 'w+');
            self::assertIsResource($stream);
            fwrite($stream, 'streamed');
            rewind($stream);
            $generated = (static function (): \Generator {
                yield 'piece';
            })();
            self::assertSame([1, true], self::pick(self::json($client->request($address, self::params('PUT'), $stream)->body())), 'a seekable body can be replayed');
            self::assertSame([4, false], self::pick(self::json($client->request($address, self::params('PUT'), $generated)->body())), 'a generator cannot');
        });
    }

    public function testAConnectionCarriesAtMostMaxRequestsAndTheLastAsksTheResponderToCloseIt(): void
    {
        $address = FastCgiAddress::parse($this->startFake());
        $this->inLoop(function () use ($address): void {
            $client = new FastCgiClient(new FastCgiOptions(maxRequestsPerConnection: 3));
            $seen = [];
            for ($i = 1; $i <= 7; $i++) {
                $seen[] = self::pick(self::json($client->request($address, self::params())->body()));
            }
            self::assertSame([[1, true], [1, true], [1, false], [2, true], [2, true], [2, false], [3, true]], $seen);
            self::assertSame(3, $client->openedConnections());
        });
    }

    public function testAConnectionOlderThanMaxConnectionAgeTakesNoFurtherRequest(): void
    {
        $address = FastCgiAddress::parse($this->startFake());
        $this->inLoop(function () use ($address): void {
            $client = new FastCgiClient(new FastCgiOptions(maxConnectionAge: 0.2));
            self::assertSame([1, true], self::pick(self::json($client->request($address, self::params())->body())));
            delay(0.3);
            self::assertSame([1, false], self::pick(self::json($client->request($address, self::params())->body())), 'past its age: answered, then closed');
            self::assertSame([2, true], self::pick(self::json($client->request($address, self::params())->body())));
        });
    }

    /**
     * @param array<string, mixed> $echo
     *
     * @return array{mixed, mixed} the fake's connection number and whether the request asked to keep it
     */
    private static function pick(array $echo): array
    {
        return [$echo['connection'], $echo['keep']];
    }

    public function testConcurrentRequestsShareAtMostMaxConnections(): void
    {
        $address = FastCgiAddress::parse($this->startFake('slow'));
        $this->inLoop(function () use ($address): void {
            $client = new FastCgiClient(new FastCgiOptions(maxConnections: 2));
            $futures = [];
            for ($i = 0; $i < 6; $i++) {
                $futures[] = async(static fn(): array => self::json($client->request($address, self::params('GET', ['FAKE_DELAY' => '0.1']))->body()));
            }
            $connections = [];
            foreach ($futures as $future) {
                $connections[] = await($future)['connection'];
            }
            self::assertSame([1, 2], \array_values(\array_unique($connections)));
            self::assertSame(2, $client->openedConnections());
        });
    }

    public function testStderrLinesGoToTheCallbackAsTheyArrive(): void
    {
        $address = FastCgiAddress::parse($this->startFake('stderr'));
        $this->inLoop(function () use ($address): void {
            $lines = [];
            $response = (new FastCgiClient())->request($address, self::params(), '', static function (string $line) use (&$lines): void {
                $lines[] = $line;
            });
            self::assertSame("Content-Type: text/plain\r\n\r\nbody more", $response->body());
            self::assertSame(['PHP Warning:  first line', 'second line', 'no newline at the end'], $lines);
        });
    }

    public function testUnixSocketResponderIsReached(): void
    {
        $path = \sys_get_temp_dir() . '/kiln-fake-' . \bin2hex(\random_bytes(4)) . '.sock';
        $address = FastCgiAddress::parse($this->startFake('echo', $path));
        try {
            $this->inLoop(function () use ($address): void {
                $client = new FastCgiClient();
                for ($i = 1; $i <= 3; $i++) {
                    $echo = self::json($client->request($address, self::params('POST'), 'x')->body());
                    self::assertSame([1, $i, 1], [$echo['connection'], $echo['request'], $echo['stdin_length']]);
                }
            });
        } finally {
            @\unlink($path);
        }
    }

    public function testSlowReaderHoldsTheResponderBackInsteadOfBuffering(): void
    {
        $address = FastCgiAddress::parse($this->startFake('chunks'));
        $this->inLoop(function () use ($address): void {
            $client = new FastCgiClient(new FastCgiOptions(abortGrace: 0.2));
            // 64 MiB: far more than the socket buffers on both sides can hold.
            $response = $client->request($address, self::params('GET', ['FAKE_CHUNKS' => '1024', 'FAKE_CHUNK_SIZE' => '65535']));
            self::assertNotNull($response->read());
            $before = \memory_get_usage();
            \Kiln\Loop\delay(0.3);
            self::assertNotNull($response->read());
            self::assertLessThan(2 * 1024 * 1024, \memory_get_usage() - $before, 'Nothing is read ahead of the reader');
            self::assertNotContains('stdout-done 1 1', $this->events(), 'The responder must be held back by the unread socket');
            $response->abort();
        });
    }

    /** @return array{params: array<string, string>, stdin_length: int, stdin_md5: string, keep: bool, connection: int, request: int} */
    private static function json(string $body): array
    {
        $json = \substr($body, (int) \strpos($body, "\r\n\r\n") + 4);
        /** @var array{params: array<string, string>, stdin_length: int, stdin_md5: string, keep: bool, connection: int, request: int} */
        return \json_decode($json, true, 512, \JSON_THROW_ON_ERROR);
    }

    private function awaitEventOutsideLoop(string $pattern): void
    {
        $this->inLoop(fn(): string => $this->awaitEvent($pattern));
    }
}
