<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Http\Internal;

use Kiln\Http\Internal\HttpCore;
use Kiln\Http\Limits;
use Kiln\Http\Request;
use Kiln\Http\RequestHandler;
use Kiln\Http\Response;
use Kiln\Loop\Driver\SelectDriver;
use Kiln\Loop\Loop;
use PHPUnit\Framework\TestCase;

/**
 * Drives an HttpCore through the stream seam: each client is one end of a stream_socket_pair(), the core
 * serves the other; no listener, no child process.
 */
abstract class CoreTestCase extends TestCase
{
    protected RecordingContext $context;

    /** @var list<resource> */
    private array $sockets = [];

    protected function setUp(): void
    {
        Loop::set(new SelectDriver());
        $this->context = new RecordingContext();
    }

    protected function tearDown(): void
    {
        foreach ($this->sockets as $socket) {
            if (\is_resource($socket)) {
                fclose($socket);
            }
        }
    }

    /** @param \Closure(Request): Response $handler */
    protected function core(\Closure $handler, Limits $limits = new Limits()): HttpCore
    {
        return new HttpCore(new class ($handler) implements RequestHandler {
            /** @param \Closure(Request): Response $handler */
            public function __construct(private readonly \Closure $handler) {}

            public function handle(Request $request): Response
            {
                return ($this->handler)($request);
            }
        }, $limits, $this->context, null);
    }

    /** @return resource the client's end of a new connection to $core */
    protected function connect(HttpCore $core): mixed
    {
        $pair = stream_socket_pair(STREAM_PF_UNIX, STREAM_SOCK_STREAM, STREAM_IPPROTO_IP);
        self::assertIsArray($pair);
        [$server, $client] = $pair;
        stream_set_blocking($server, false);
        stream_set_blocking($client, false);
        $this->sockets[] = $server;
        $this->sockets[] = $client;
        $core->open($server, '192.0.2.7', 40000);
        return $client;
    }

    /**
     * Runs the loop, reading what $client receives, until $done says so for everything read, or the client
     * sees the end of the stream ($done is then asked once more), or $timeout passes.
     *
     * @param resource $client
     * @param \Closure(string): bool $done
     */
    protected function receive(mixed $client, \Closure $done, float $timeout = 5.0): string
    {
        $received = '';
        $reader = Loop::onReadable($client, static function () use ($client, $done, &$received): void {
            $data = fread($client, 1 << 20);
            if (\is_string($data)) {
                $received .= $data;
            }
            if ($done($received) || feof($client)) {
                Loop::stop();
            }
        });
        $this->runFor($timeout, static fn(): bool => false);
        Loop::cancel($reader);
        return $received;
    }

    /**
     * Runs the loop until $until holds (checked every millisecond), Loop::stop() is called, or $timeout passes.
     *
     * @param \Closure(): bool $until
     */
    protected function runFor(float $timeout, \Closure $until): void
    {
        $check = Loop::repeat(0.001, static function () use ($until): void {
            if ($until()) {
                Loop::stop();
            }
        });
        $limit = Loop::delay($timeout, static function (): void {
            Loop::stop();
        });
        Loop::run();
        Loop::cancel($check);
        Loop::cancel($limit);
    }

    /**
     * Reads what the client has received so far, without waiting.
     *
     * @param resource $client
     */
    protected static function pending(mixed $client): string
    {
        return (string) fread($client, 1 << 20);
    }

    /** @param resource $client */
    protected static function closedByServer(mixed $client): bool
    {
        fread($client, 1 << 20);
        return feof($client);
    }

    /** A GET request's bytes. */
    protected static function request(string $target, string $extra = ''): string
    {
        return "GET $target HTTP/1.1\r\nHost: test\r\n$extra\r\n";
    }

    /** @return list<string> the bodies of the plain-text responses in $bytes, in order */
    protected static function bodies(string $bytes): array
    {
        preg_match_all('~HTTP/1\.1 \d{3} [^\r]*\r\n(?:[^\r]+\r\n)*?Content-Length: (\d+)\r\n(?:[^\r]+\r\n)*\r\n~', $bytes, $heads, PREG_OFFSET_CAPTURE);
        $bodies = [];
        foreach ($heads[0] as $i => [$head, $offset]) {
            $bodies[] = substr($bytes, $offset + \strlen($head), (int) $heads[1][$i][0]);
        }
        return $bodies;
    }
}
