<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Bus;

use Kiln\Tests\Support\HttpClient;
use Kiln\Tests\Support\KilnProcess;
use Kiln\Tests\Support\RawClient;
use PHPUnit\Framework\TestCase;

/**
 * `kiln serve` with 2 workers and tests/Fixtures/bus/app.php: a message published in one worker (a route,
 * a sequential-tier script, an isolated-tier script, a fork-tier script) reaches the subscriber of every
 * worker once, in the publisher's order, also across a reload. That outside callers cannot publish:
 * tests/Security/BusForgeryTest.php.
 */
final class NodeBusTest extends TestCase
{
    private const APP = __DIR__ . '/../../Fixtures/bus/app.php';

    private ?KilnProcess $kiln = null;

    protected function setUp(): void
    {
        $this->kiln = KilnProcess::start(self::APP, ['--workers=2', '--pool-size=1']);
    }

    protected function tearDown(): void
    {
        $this->kiln?->stop();
        $this->kiln = null;
    }

    public function testAMessagePublishedInOneWorkerReachesEveryWorkerOnceInPublishOrder(): void
    {
        $pids = $this->workers();
        $published = [];
        for ($i = 1; $i <= 20; $i++) {
            $published[] = ["m$i", $this->publish('news', "m$i")];
        }
        self::assertGreaterThan(1, \count(array_unique(array_column($published, 1))), 'both workers published (new connections spread)');
        $heard = $this->waitUntilEveryWorkerHeard($pids, array_column($published, 0));
        foreach ($heard as $pid => $messages) {
            self::assertEqualsCanonicalizing(array_column($published, 0), $messages, "worker $pid heard each message once");
            foreach (array_unique(array_column($published, 1)) as $publisher) {
                $ordered = array_values(array_column(array_filter($published, static fn(array $p): bool => $p[1] === $publisher), 0));
                self::assertSame($ordered, array_values(array_intersect($messages, $ordered)), "worker $pid heard worker $publisher's messages in order");
            }
        }
    }

    public function testAMessageOfAMebibyteCrossesTheNode(): void
    {
        $pids = $this->workers();
        $big = str_repeat('0123456789abcdef', 65536) . 'end';
        $this->publish('news', $big);
        $heard = $this->waitUntilEveryWorkerHeard($pids, [$big]);
        foreach ($heard as $messages) {
            self::assertSame([$big], $messages);
        }
    }

    public function testScriptsOfTheSequentialIsolatedAndForkTiersPublishToEveryWorker(): void
    {
        $pids = $this->workers();
        $sent = [];
        foreach (['/publish.php', '/iso/publish.php', '/fork/publish.php'] as $i => $path) {
            $response = HttpClient::get($this->kiln()->baseUrl() . "$path?m=tier$i", timeout: 15);
            self::assertSame(200, $response['status'], "$path: {$response['body']}\n" . $this->kiln()->log());
            $sent[] = "tier$i";
        }
        $heard = $this->waitUntilEveryWorkerHeard($pids, $sent);
        foreach ($heard as $pid => $messages) {
            self::assertEqualsCanonicalizing($sent, $messages, "worker $pid");
        }
    }

    public function testASequentialScriptThatPublishesThenExitsStillReachesTheOtherWorker(): void
    {
        $pids = $this->workers();
        $response = HttpClient::get($this->kiln()->baseUrl() . '/exit.php?m=last-words', timeout: 15);
        self::assertSame(200, $response['status']);
        $exited = (int) $response['body'];
        self::assertArrayHasKey($exited, $pids);
        // exit() on the sequential tier ends that worker (its replacement starts after the message).
        unset($pids[$exited]);
        $heard = $this->waitUntilEveryWorkerHeard($pids, ['last-words']);
        self::assertSame([['last-words']], array_values($heard));
    }

    public function testAWorkerKilledIsReplacedAndTheReplacementIsOnTheBus(): void
    {
        $pids = $this->workers();
        $victim = (int) array_key_first($pids);
        posix_kill($victim, SIGKILL);
        $this->kiln()->waitForLog('~pid ' . $victim . '\) killed by signal 9~', 10);
        $now = $this->workers([$victim]);
        self::assertCount(2, $now);
        $this->publish('news', 'after-the-crash');
        foreach ($this->waitUntilEveryWorkerHeard($now, ['after-the-crash']) as $pid => $messages) {
            self::assertSame(1, \count(array_keys($messages, 'after-the-crash', true)), "worker $pid heard it once");
        }
    }

    public function testOldAndNewGenerationsHearEachOtherDuringAReloadAndTheNewOnesAfterIt(): void
    {
        $old = $this->workers();
        // A request that keeps an old worker draining until it heard the new generation, then has it publish.
        $hold = new RawClient($this->kiln()->host(), $this->kiln()->port(), 20);
        $hold->send("GET /hold?until=from-new&say=from-old HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        $this->waitUntilEveryWorkerHeard($old, ['holding']); // the request runs on an old worker
        $this->kiln()->signal(SIGHUP);
        $this->kiln()->waitForLog('~reloaded: generation 2 serving~', 15);
        $new = $this->workers(array_keys($old));
        self::assertSame([], array_intersect(array_keys($new), array_keys($old)));
        $this->publish('news', 'from-new');
        $held = $hold->readResponse(20);
        self::assertNotNull($held);
        $report = json_decode($held['body'], true);
        self::assertIsArray($report);
        self::assertContains($report['pid'] ?? null, array_keys($old));
        self::assertIsArray($report['messages'] ?? null);
        self::assertContains('from-new', $report['messages'], 'a draining worker hears the new generation');
        $heard = $this->waitUntilEveryWorkerHeard($new, ['from-new', 'from-old']);
        foreach ($heard as $pid => $messages) {
            self::assertEqualsCanonicalizing(['from-new', 'from-old'], $messages, "new worker $pid hears both generations");
        }
    }

    private function kiln(): KilnProcess
    {
        return $this->kiln ?? throw new \LogicException('not started');
    }

    /**
     * The pids answering /received (new connections until two distinct ones answered).
     *
     * @param list<int> $except pids of workers that no longer count
     * @return array<int, true>
     */
    private function workers(array $except = []): array
    {
        $pids = [];
        $deadline = microtime(true) + 15;
        while (\count($pids) < 2) {
            $report = $this->received();
            if (!\in_array($report['pid'], $except, true)) {
                self::assertTrue($report['spans'], 'a worker of kiln serve has the node-wide bus');
                $pids[$report['pid']] = true;
            }
            if (microtime(true) > $deadline) {
                self::fail('two workers did not answer: ' . json_encode($pids) . "\n" . $this->kiln()->log());
            }
        }
        return $pids;
    }

    /**
     * Asks /received until every worker heard $expected (or 15 s passed).
     *
     * @param array<int, true> $pids
     * @param list<string> $expected
     * @return array<int, list<string>> pid => what it heard
     */
    private function waitUntilEveryWorkerHeard(array $pids, array $expected): array
    {
        $heard = [];
        $deadline = microtime(true) + 15;
        while (true) {
            $report = $this->received();
            if (isset($pids[$report['pid']])) {
                $heard[$report['pid']] = $report['messages'];
            }
            $done = \count($heard) === \count($pids);
            foreach ($heard as $messages) {
                $done = $done && array_diff($expected, $messages) === [];
            }
            if ($done) {
                return $heard;
            }
            if (microtime(true) > $deadline) {
                self::fail('not every worker heard ' . json_encode($expected) . ': ' . substr((string) json_encode($heard), 0, 2000) . "\n" . $this->kiln()->log());
            }
            usleep(10_000);
        }
    }

    /** @return array{pid: int, spans: bool, messages: list<string>} */
    private function received(): array
    {
        $response = HttpClient::get($this->kiln()->baseUrl() . '/received');
        self::assertSame(200, $response['status'], $response['body']);
        $report = json_decode($response['body'], true);
        self::assertIsArray($report);
        /** @var array{pid: int, spans: bool, messages: list<string>} $report */
        return $report;
    }

    /** POSTs $payload to /publish/$channel; returns the pid of the worker that published it. */
    private function publish(string $channel, string $payload): int
    {
        $client = new RawClient($this->kiln()->host(), $this->kiln()->port(), 10);
        $client->send("POST /publish/$channel HTTP/1.1\r\nHost: x\r\nContent-Length: " . \strlen($payload) . "\r\nConnection: close\r\n\r\n" . $payload);
        $response = $client->readResponse(10);
        $client->close();
        self::assertNotNull($response);
        self::assertSame(200, $response['status'], $response['body']);
        $report = json_decode($response['body'], true);
        $pid = \is_array($report) ? $report['pid'] ?? null : null;
        self::assertIsInt($pid);
        return $pid;
    }
}
