<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Sequential;

use Kiln\Tests\Support\KilnProcess;
use Kiln\Tests\Support\PeerProcess;
use Kiln\Tests\Support\RawClient;
use PHPUnit\Framework\TestCase;

/**
 * A document root on the sequential tier takes a connection only when the worker has nothing else to serve, as a
 * php-fpm child does. A page and its resources asked for at once (a browser's six connections), each script
 * registering a shutdown function (DokuWiki, WordPress and phpMyAdmin do, and the tier then ends the worker after
 * it), are all served: no request waits in a worker that ends and gets its 503.
 */
final class OneConnectionAtATimeTest extends TestCase
{
    private ?string $root = null;

    private ?KilnProcess $server = null;

    /** @var list<RawClient> */
    private array $clients = [];

    protected function tearDown(): void
    {
        foreach ($this->clients as $client) {
            $client->close();
        }
        $this->clients = [];
        $this->server?->stop();
        $this->server = null;
        if ($this->root !== null) {
            PeerProcess::removeDir($this->root);
            $this->root = null;
        }
    }

    public function testRequestsAskedForTogetherAreAllServedWhenEachScriptEndsItsWorker(): void
    {
        $server = $this->serve('<?php register_shutdown_function(static function (): void {}); usleep(20000); echo "page ", getmypid();', 2);
        self::assertSame(array_fill(0, 24, 200), $this->sixAtOnce(4), $server->log());
    }

    /** Static files a worker sends (a page's styles) do not count among the scripts that end its one at a time. */
    public function testStaticFilesDoNotEndTheOneAtATime(): void
    {
        $server = $this->serve('<?php register_shutdown_function(static function (): void {}); usleep(20000); echo "page";', 1);
        file_put_contents("$this->root/public/style.css", 'body {}');
        $kept = $this->connect();
        for ($i = 0; $i < 20; $i++) {
            $kept->send("GET /style.css HTTP/1.1\r\nHost: test\r\n\r\n");
            self::assertSame(200, $kept->readResponse(5.0)['status'] ?? null);
        }
        self::assertSame(array_fill(0, 12, 200), $this->sixAtOnce(2), $server->log());
    }

    /** A connection that says nothing holds the worker's accepting back for a moment only. */
    public function testASilentConnectionDoesNotKeepOthersOut(): void
    {
        $this->serve('<?php echo "page";', 1);
        $this->connect();
        usleep(20_000);
        $this->assertAnsweredWithin(1.0, 'held back past the moment a new connection gets');
    }

    /**
     * Connections that say nothing, opened one after another, one that sends its head a line at a time and one whose
     * chunked body stopped cannot keep the worker from taking the others: after one stayed quiet, none holds back.
     */
    public function testAStreamOfSilentOrSlowConnectionsDoesNotKeepOthersOut(): void
    {
        $this->serve('<?php echo "page";', 1);
        $this->connect()->send("POST /page.php HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: chunked\r\n\r\n1"); // stopped in a chunk-size line
        $slow = $this->connect();
        $slow->send("GET /page.php HTTP/1.1\r\nHost: test\r\n");
        for ($i = 0; $i < 20; $i++) { // 20 silent connections over about 1 s: 5 s of holding back at 0.25 s each
            $this->connect();
            $slow->send("X-Slow-$i: yes\r\n");
            usleep(50_000);
        }
        $this->assertAnsweredWithin(1.0, 'kept out by connections that say nothing');
    }

    private function serve(string $page, int $workers): KilnProcess
    {
        $this->root = PeerProcess::tempDir('kiln-one-at-a-time');
        mkdir("$this->root/public");
        file_put_contents("$this->root/public/page.php", $page);
        return $this->server = KilnProcess::start($this->root, ["--workers=$workers", '--tier=sequential', '--front-controller=none']);
    }

    /**
     * $rounds of six requests for page.php sent at once on connections of their own, as a browser asks for a page's
     * resources: the status of each answer, in order.
     *
     * @return list<int>
     */
    private function sixAtOnce(int $rounds): array
    {
        $statuses = [];
        for ($round = 0; $round < $rounds; $round++) {
            $clients = [];
            for ($i = 0; $i < 6; $i++) {
                $clients[$i] = $this->connect();
                $clients[$i]->send("GET /page.php HTTP/1.1\r\nHost: test\r\n\r\n");
            }
            foreach ($clients as $client) {
                $statuses[] = $client->readResponse(20.0)['status'] ?? 0;
            }
        }
        return $statuses;
    }

    private function connect(): RawClient
    {
        \assert($this->server !== null);
        return $this->clients[] = RawClient::to($this->server);
    }

    private function assertAnsweredWithin(float $seconds, string $why): void
    {
        $client = $this->connect();
        $client->send("GET /page.php HTTP/1.1\r\nHost: test\r\n\r\n");
        $started = microtime(true);
        self::assertSame(200, $client->readResponse(10.0)['status'] ?? null);
        self::assertLessThan($seconds, microtime(true) - $started, $why);
    }
}
