<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Sse;

use Kiln\Tests\Support\HttpClient;
use Kiln\Tests\Support\KilnProcess;
use Kiln\Tests\Support\RawClient;
use Kiln\Tests\Support\SseClient;
use Kiln\Tests\Support\SseParser;
use PHPUnit\Framework\TestCase;

/** Event streams on one worker, read by curl and by a raw socket. */
final class EventStreamTest extends TestCase
{
    private const APP = __DIR__ . '/../../Fixtures/sse/app.php';

    private ?KilnProcess $server = null;

    /** @var list<SseClient> */
    private array $clients = [];

    protected function tearDown(): void
    {
        foreach ($this->clients as $client) {
            $client->close();
        }
        $this->server?->stop();
        $this->server = null;
    }

    /** @param list<string> $args */
    private function start(array $args = []): KilnProcess
    {
        return $this->server = KilnProcess::start(self::APP, ['--workers=1', ...$args]);
    }

    /** @param array<string, string> $headers */
    private function connect(string $path, array $headers = []): SseClient
    {
        \assert($this->server !== null);
        return $this->clients[] = new SseClient($this->server->host(), $this->server->port(), $path, $headers);
    }

    private function publish(string $topic, string $data, string $query = ''): string
    {
        \assert($this->server !== null);
        [$status, $body] = SseClient::post($this->server->host(), $this->server->port(), "/publish/$topic$query", $data);
        self::assertSame(200, $status, $body);
        $decoded = json_decode($body, true);
        self::assertIsArray($decoded);
        self::assertIsString($decoded['id']);
        return $decoded['id'];
    }

    private function subscribers(string $topic): int
    {
        \assert($this->server !== null);
        $decoded = json_decode(HttpClient::get($this->server->baseUrl() . "/subscribers/$topic")['body'], true);
        self::assertIsArray($decoded);
        self::assertIsInt($decoded['subscribers']);
        return $decoded['subscribers'];
    }

    public function testCurlReceivesEventsWithTheStreamHeadersAndCorrectFraming(): void
    {
        $server = $this->start();
        $output = (string) tempnam(sys_get_temp_dir(), 'kiln-sse-curl-');
        $curl = proc_open(['curl', '-sSN', '-i', '--max-time', '20', $server->baseUrl() . '/events/news'], [0 => ['file', '/dev/null', 'r'], 1 => ['file', $output, 'w'], 2 => ['file', '/dev/null', 'w']], $pipes);
        self::assertIsResource($curl);
        try {
            self::assertTrue($this->until(fn(): bool => $this->subscribers('news') === 1), 'curl subscribed');
            $this->publish('news', "first line\r\nsecond line\nthird", '?event=update');
            $this->publish('news', 'plain');
            $parser = new SseParser();
            $read = static function () use ($output, &$parser): bool {
                $raw = (string) file_get_contents($output);
                $end = strpos($raw, "\r\n\r\n");
                $parser = new SseParser();
                $parser->feed($end === false ? '' : substr($raw, $end + 4));
                return \count($parser->events()) >= 2;
            };
            self::assertTrue($this->until($read), 'curl got both events: ' . file_get_contents($output));
            $raw = (string) file_get_contents($output);
            $head = strtolower(substr($raw, 0, (int) strpos($raw, "\r\n\r\n")));
            self::assertStringStartsWith('http/1.1 200', $head);
            self::assertStringContainsString("\r\ncontent-type: text/event-stream", $head);
            self::assertStringContainsString("\r\ncache-control: no-cache", $head);
            self::assertStringContainsString("\r\nx-accel-buffering: no", $head);
            self::assertStringContainsString("\r\ntransfer-encoding: chunked", $head);
            self::assertSame([
                ['event' => 'update', 'data' => "first line\nsecond line\nthird", 'id' => '1'],
                ['event' => 'message', 'data' => 'plain', 'id' => '2'],
            ], $parser->events());
            self::assertTrue($parser->isBetweenEvents());
        } finally {
            proc_terminate($curl);
            proc_close($curl);
            @unlink($output);
        }
    }

    public function testTheRouteTopicFormFollowsItsTopicOverHttp10(): void
    {
        $this->start();
        $client = $this->connect('/plain/alerts');
        self::assertSame(200, $client->status);
        self::assertSame('text/event-stream; charset=utf-8', $client->headers['content-type']);
        self::assertArrayNotHasKey('transfer-encoding', $client->headers);
        self::assertTrue($this->until(fn(): bool => $this->subscribers('alerts') === 1));
        $this->publish('alerts', 'fire');
        self::assertTrue($client->waitFor(static fn(SseParser $p): bool => $p->events() !== []));
        self::assertSame([['event' => 'message', 'data' => 'fire', 'id' => '1']], $client->parser->events());
    }

    public function testAHandlerRefusesWithAnHttpErrorBeforeTheStreamStarts(): void
    {
        $this->start();
        $client = $this->connect('/private/x');
        self::assertSame(403, $client->status);
        self::assertSame(0, $this->subscribers('x'));
    }

    public function testAnOpenStreamHoldsNoHandlerSoOtherRequestsRunBesideIt(): void
    {
        $this->start(['--limit-concurrency=1']);
        foreach (range(1, 3) as $i) {
            $this->connect('/events/many')->readWorkerPid();
        }
        // With one handler allowed at a time, a stream that kept its handler would make this a 503.
        self::assertSame(3, $this->subscribers('many'));
    }

    public function testAQuietStreamGetsHeartbeatComments(): void
    {
        $this->start(['--limit-sse-heartbeat=0.3']);
        $client = $this->connect('/events/quiet');
        $heartbeats = static fn(SseParser $p): int => \count(array_keys($p->comments(), 'heartbeat', true));
        self::assertTrue($client->waitFor(static fn(SseParser $p): bool => $heartbeats($p) >= 2, 10.0), 'two heartbeats seen');
        self::assertSame([], $client->parser->events());
    }

    public function testAHeartbeatGoesWhenTheStreamHasBeenQuietForTheWholePeriodNotHalfOfIt(): void
    {
        $this->start(['--limit-sse-heartbeat=1']);
        $client = $this->connect('/plain/period');
        $arrivals = [microtime(true)]; // the head is out: the stream is quiet from here
        foreach ([1, 2] as $count) {
            self::assertTrue($client->waitFor(static fn(SseParser $p): bool => \count($p->comments()) >= $count, 5.0), "heartbeat $count");
            $arrivals[] = microtime(true);
        }
        self::assertSame(['heartbeat', 'heartbeat'], $client->parser->comments());
        foreach ([1, 2] as $i) {
            $gap = $arrivals[$i] - $arrivals[$i - 1];
            // Due after 1 s of quiet, at most a tenth of it late (plus this machine's scheduling).
            self::assertGreaterThan(0.9, $gap, "heartbeat $i came after {$gap} s of quiet");
            self::assertLessThan(1.6, $gap, "heartbeat $i came after {$gap} s of quiet");
        }
    }

    public function testAClientThatReconnectsWithLastEventIdGetsWhatItMissedInOrder(): void
    {
        $this->start();
        $first = $this->connect('/events/feed');
        self::assertTrue($this->until(fn(): bool => $this->subscribers('feed') === 1));
        $this->publish('feed', 'one');
        $this->publish('feed', 'two');
        self::assertTrue($first->waitFor(static fn(SseParser $p): bool => \count($p->events()) === 2));
        $first->close();
        self::assertTrue($this->until(fn(): bool => $this->subscribers('feed') === 0), 'the server saw the client leave');
        $this->publish('feed', 'three');
        $this->publish('feed', "four\nlines");
        $again = $this->connect('/events/feed', ['Last-Event-ID' => '2']);
        self::assertTrue($again->waitFor(static fn(SseParser $p): bool => \count($p->events()) === 2));
        $this->publish('feed', 'five');
        self::assertTrue($again->waitFor(static fn(SseParser $p): bool => \count($p->events()) === 3));
        self::assertSame(['3', '4', '5'], array_column($again->parser->events(), 'id'));
        self::assertSame(['three', "four\nlines", 'five'], array_column($again->parser->events(), 'data'));
    }

    public function testAStreamOnTwoTopicsReconnectsWithAnIdThatReplaysEachTopicFromWhereItWas(): void
    {
        $this->start();
        $first = $this->connect('/live/7');
        self::assertTrue($this->until(fn(): bool => $this->subscribers('announcements') === 1 && $this->subscribers('account-7') === 1));
        foreach (['a1', 'a2', 'a3'] as $data) {
            $this->publish('account-7', $data);
        }
        self::assertTrue($first->waitFor(static fn(SseParser $p): bool => \count($p->events()) === 3));
        $this->publish('announcements', 'n1');
        self::assertTrue($first->waitFor(static fn(SseParser $p): bool => \count($p->events()) === 4));
        $first->close();
        self::assertTrue($this->until(fn(): bool => $this->subscribers('announcements') === 0), 'the server saw the client leave');
        $this->publish('announcements', 'n2 missed');
        $this->publish('account-7', 'a4 missed');
        $last = $first->parser->events()[3]['id'];

        $again = $this->connect('/live/7', ['Last-Event-ID' => $last]);
        self::assertTrue($again->waitFor(static fn(SseParser $p): bool => \count($p->events()) >= 2));
        $this->publish('announcements', 'n3 live');
        self::assertTrue($again->waitFor(static fn(SseParser $p): bool => \count($p->events()) >= 3));
        self::assertFalse($again->waitFor(static fn(SseParser $p): bool => \count($p->events()) > 3, 0.3), 'nothing more');
        self::assertSame(['a4 missed', 'n2 missed', 'n3 live'], array_column($again->parser->events(), 'data'));
        self::assertMatchesRegularExpression('/\A[0-9a-z]+:3\.[0-9a-z]+:1\z/', $last, 'the account at 3, the announcements at 1');
    }

    public function testAnIdOlderThanTheReplayBufferReplaysWhatIsLeft(): void
    {
        $this->start(['--limit-sse-replay=2']);
        $first = $this->connect('/events/short');
        self::assertTrue($this->until(fn(): bool => $this->subscribers('short') === 1));
        foreach (['a', 'b', 'c', 'd'] as $data) {
            $this->publish('short', $data);
        }
        self::assertTrue($first->waitFor(static fn(SseParser $p): bool => \count($p->events()) === 4));
        $again = $this->connect('/events/short', ['Last-Event-ID' => '1']);
        self::assertTrue($again->waitFor(static fn(SseParser $p): bool => \count($p->events()) === 2));
        self::assertSame(['c', 'd'], array_column($again->parser->events(), 'data'));
    }

    public function testAClientThatLeavesIsForgottenAndPublishingGoesOn(): void
    {
        $server = $this->start();
        $client = $this->connect('/events/gone');
        $stays = $this->connect('/events/gone');
        self::assertTrue($this->until(fn(): bool => $this->subscribers('gone') === 2));
        $client->close();
        self::assertTrue($this->until(fn(): bool => $this->subscribers('gone') === 1), 'the stream left its topic');
        $this->publish('gone', 'after');
        self::assertTrue($stays->waitFor(static fn(SseParser $p): bool => $p->events() !== []));
        $stays->close();
        self::assertTrue($this->until(fn(): bool => $this->subscribers('gone') === 0));
        $this->publish('gone', 'to nobody');
        self::assertDoesNotMatchRegularExpression('/error|Uncaught/i', $server->log());
    }

    public function testAGracefulStopEndsOpenStreams(): void
    {
        $server = $this->start();
        $client = $this->connect('/events/stop');
        self::assertTrue($this->until(fn(): bool => $this->subscribers('stop') === 1));
        $server->signal(SIGQUIT);
        self::assertTrue($client->waitForClose(10.0), 'the stream ended, so the client reconnects elsewhere');
        self::assertNotNull($server->waitForExit(10.0));
    }

    /**
     * A reload ends the open streams; a proxy that keeps its connections to Kiln (nginx's upstream keep-alive)
     * sends the client's reconnect on the connection the stream just ended on. That request gets an answer (with
     * `Connection: close`) from the draining worker, not a closed connection, which nginx counts as a failure of the
     * node and, with max_fails=1 (docs/scaling.md), takes the node out for fail_timeout.
     */
    public function testARequestSentOnTheConnectionOfAStreamADrainEndedIsAnswered(): void
    {
        $server = $this->start();
        $client = RawClient::to($server);
        $client->send("GET /events/reused HTTP/1.1\r\nHost: kiln.test\r\n\r\n");
        self::assertTrue($this->until(fn(): bool => $this->subscribers('reused') === 1));
        $server->signal(SIGHUP);
        $stream = $client->readResponse(10.0);
        self::assertNotNull($stream);
        self::assertSame(200, $stream['status']);
        self::assertArrayNotHasKey('connection', $stream['headers'], 'the stream\'s head promised a kept connection');
        $client->send("GET /subscribers/reused HTTP/1.1\r\nHost: kiln.test\r\n\r\n");
        $next = $client->readResponse();
        self::assertNotNull($next, "the connection was closed under the request sent on it\n" . $server->log());
        self::assertSame(200, $next['status']);
        self::assertSame(['close'], $next['headers']['connection'] ?? []);
        self::assertTrue($client->isClosedWithin(5));
    }

    public function testAWorkerThatExitsEndsItsOpenStreamsInsteadOfHoldingThemToTheDeadline(): void
    {
        $server = $this->start(['--drain-timeout=60']);
        $client = $this->connect('/events/exit');
        $pid = $client->readWorkerPid();
        self::assertSame('bye', HttpClient::get($server->baseUrl() . '/exit.php')['body']);
        $server->waitForLog('/finishing 1 response\(s\) already under way/', 10.0);
        self::assertTrue($client->waitForClose(10.0), 'the stream ended, long before the 60 s drain timeout');
        $deadline = microtime(true) + 10.0;
        while (\in_array($pid, $server->workerPids(), true) && microtime(true) < $deadline) {
            usleep(20_000);
        }
        self::assertNotContains($pid, $server->workerPids(), 'the worker exited: ' . $server->log());
        $again = $this->connect('/events/exit');
        self::assertNotSame($pid, $again->readWorkerPid(), 'the replacement serves the reconnect');
    }

    private function until(\Closure $condition, float $timeout = 5.0): bool
    {
        $deadline = microtime(true) + $timeout;
        while (!$condition()) {
            if (microtime(true) > $deadline) {
                return false;
            }
            usleep(20_000);
        }
        return true;
    }
}
