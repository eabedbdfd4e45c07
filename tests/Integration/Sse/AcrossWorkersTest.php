<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Sse;

use Kiln\Tests\Support\HttpClient;
use Kiln\Tests\Support\KilnProcess;
use Kiln\Tests\Support\SseClient;
use Kiln\Tests\Support\SseParser;
use PHPUnit\Framework\TestCase;

/**
 * A topic published from a route reaches the SSE clients of both workers, once each, with the same ids:
 * the publishing worker hands the event to the node's bus.
 */
final class AcrossWorkersTest extends TestCase
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

    public function testAPublishFromEitherWorkerReachesTheClientsOfBothWorkersOnceEach(): void
    {
        $server = $this->server = KilnProcess::start(self::APP, ['--workers=2']);
        // Connect until a client sits on each worker (the kernel and the accept balance decide where).
        $byWorker = [];
        for ($i = 0; $i < 40 && \count($byWorker) < 2; $i++) {
            $client = $this->clients[] = new SseClient($server->host(), $server->port(), '/events/both');
            $byWorker[$client->readWorkerPid()] ??= $client;
        }
        self::assertCount(2, $byWorker, 'streams open on both workers');
        // Publish from both workers: a publish lands on whichever worker accepts its connection.
        $publishers = [];
        $sent = [];
        for ($i = 1; $i <= 40 && (\count($publishers) < 2 || $i <= 10); $i++) {
            [$status, $body] = SseClient::post($server->host(), $server->port(), '/publish/both', "event $i");
            self::assertSame(200, $status, $body);
            $reply = json_decode($body, true);
            self::assertIsArray($reply);
            self::assertIsInt($reply['pid']);
            self::assertIsString($reply['id']);
            $publishers[$reply['pid']] = true;
            $sent[] = ['event' => 'message', 'data' => "event $i", 'id' => $reply['id']];
        }
        self::assertCount(2, $publishers, 'both workers published');
        $count = \count($sent);
        foreach ($this->clients as $client) {
            $client->waitFor(static fn(SseParser $p): bool => \count($p->events()) >= $count, 5.0);
            $events = $client->parser->events();
            usort($events, static fn(array $a, array $b): int => (int) $a['id'] <=> (int) $b['id']);
            self::assertSame($sent, $events, "the client on worker {$client->workerPid} got every event once");
        }
        // A classic script of the sequential tier publishes the same way, with the next id.
        $next = (string) ($count + 1);
        $reply = HttpClient::get($server->baseUrl() . '/publish.php?topic=both&m=' . rawurlencode('from a script'));
        self::assertSame(200, $reply['status'], $reply['body']);
        self::assertSame($next, $reply['body']);
        foreach ($this->clients as $client) {
            self::assertTrue($client->waitFor(static fn(SseParser $p): bool => \count($p->events()) > $count, 5.0));
            self::assertSame(['event' => 'script', 'data' => 'from a script', 'id' => $next], $client->parser->events()[$count]);
        }
    }

    public function testAClientThatReconnectsToAWorkerThatNeverFollowedTheTopicGetsWhatItMissed(): void
    {
        $server = $this->server = KilnProcess::start(self::APP, ['--workers=2']);
        $first = $this->clients[] = new SseClient($server->host(), $server->port(), '/events/rejoin');
        $firstWorker = $first->readWorkerPid();
        foreach (['one', 'two'] as $data) {
            self::assertSame(200, SseClient::post($server->host(), $server->port(), '/publish/rejoin', $data)[0]);
        }
        self::assertTrue($first->waitFor(static fn(SseParser $p): bool => \count($p->events()) === 2));
        $first->close();
        self::assertSame(200, SseClient::post($server->host(), $server->port(), '/publish/rejoin', 'three')[0]);
        $other = null;
        for ($i = 0; $i < 40 && $other === null; $i++) {
            $client = $this->clients[] = new SseClient($server->host(), $server->port(), '/events/rejoin', ['Last-Event-ID' => '2']);
            if ($client->readWorkerPid() !== $firstWorker) {
                $other = $client;
            } else {
                $client->close();
            }
        }
        self::assertNotNull($other, 'a reconnect landed on the other worker');
        self::assertTrue($other->waitFor(static fn(SseParser $p): bool => $p->events() !== []));
        self::assertSame([['event' => 'message', 'data' => 'three', 'id' => '3']], $other->parser->events());
    }

    public function testScriptsOfTheSequentialIsolatedAndForkTiersPublishNumberedEventsToBothWorkers(): void
    {
        $server = $this->server = KilnProcess::start(self::APP, ['--workers=2', '--pool-size=1']);
        $byWorker = [];
        for ($i = 0; $i < 40 && \count($byWorker) < 2; $i++) {
            $client = $this->clients[] = new SseClient($server->host(), $server->port(), '/events/tiers');
            $byWorker[$client->readWorkerPid()] ??= $client;
        }
        self::assertCount(2, $byWorker, 'streams open on both workers');
        $scripts = ['/event.php' => 'sequential', '/iso/event.php' => 'isolated', '/fork/event.php' => 'fork'];
        foreach (array_keys($scripts) as $script) {
            $reply = HttpClient::get($server->baseUrl() . $script . '?topic=tiers&m=' . rawurlencode("from $script"), [], 15.0);
            self::assertSame('published', $reply['body'], "$script: " . $server->log());
        }
        $expected = [];
        $id = 0;
        foreach ($scripts as $script => $tier) {
            $expected[] = ['event' => $tier, 'data' => "from $script", 'id' => (string) ++$id];
        }
        foreach ($this->clients as $client) {
            $client->waitFor(static fn(SseParser $p): bool => \count($p->events()) >= 3, 5.0);
            self::assertSame($expected, $client->parser->events(), "the client on worker {$client->workerPid}");
        }
    }
}
