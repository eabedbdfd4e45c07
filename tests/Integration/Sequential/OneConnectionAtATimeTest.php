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
    public function testRequestsAskedForTogetherAreAllServedWhenEachScriptEndsItsWorker(): void
    {
        $root = PeerProcess::tempDir('kiln-one-at-a-time');
        $server = null;
        try {
            mkdir("$root/public");
            file_put_contents("$root/public/page.php", '<?php register_shutdown_function(static function (): void {}); usleep(20000); echo "page ", getmypid();');
            $server = KilnProcess::start($root, ['--workers=2', '--tier=sequential', '--front-controller=none']);
            $statuses = [];
            for ($round = 0; $round < 4; $round++) {
                $clients = [];
                for ($i = 0; $i < 6; $i++) {
                    $clients[$i] = RawClient::to($server);
                    $clients[$i]->send("GET /page.php HTTP/1.1\r\nHost: test\r\n\r\n");
                }
                foreach ($clients as $client) {
                    $response = $client->readResponse(20.0);
                    $statuses[] = $response['status'] ?? 0;
                    $client->close();
                }
            }
            self::assertSame(array_fill(0, 24, 200), $statuses, $server->log());
        } finally {
            $server?->stop();
            PeerProcess::removeDir($root);
        }
    }

    /** A connection that says nothing holds the worker's accepting back for a moment only. */
    public function testASilentConnectionDoesNotKeepOthersOut(): void
    {
        $root = PeerProcess::tempDir('kiln-one-at-a-time');
        $server = null;
        try {
            mkdir("$root/public");
            file_put_contents("$root/public/page.php", '<?php echo "page";');
            $server = KilnProcess::start($root, ['--workers=1', '--tier=sequential', '--front-controller=none']);
            $silent = RawClient::to($server);
            usleep(20_000);
            $client = RawClient::to($server);
            $client->send("GET /page.php HTTP/1.1\r\nHost: test\r\n\r\n");
            $started = microtime(true);
            $response = $client->readResponse(5.0);
            self::assertSame(200, $response['status'] ?? null);
            self::assertLessThan(1.0, microtime(true) - $started, 'held back past the moment a new connection gets');
            $silent->close();
            $client->close();
        } finally {
            $server?->stop();
            PeerProcess::removeDir($root);
        }
    }

    /**
     * Connections that say nothing, opened one after another, one that sends its head a line at a time and one whose
     * chunked body stopped cannot keep the worker from taking the others: after one stayed quiet, none holds back.
     */
    public function testAStreamOfSilentOrSlowConnectionsDoesNotKeepOthersOut(): void
    {
        $root = PeerProcess::tempDir('kiln-one-at-a-time');
        $server = null;
        $held = [];
        try {
            mkdir("$root/public");
            file_put_contents("$root/public/page.php", '<?php echo "page";');
            $server = KilnProcess::start($root, ['--workers=1', '--tier=sequential', '--front-controller=none']);
            $stalled = RawClient::to($server); // a chunked body stopped inside a chunk-size line
            $stalled->send("POST /page.php HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: chunked\r\n\r\n1");
            $held[] = $stalled;
            $slow = RawClient::to($server);
            $slow->send("GET /page.php HTTP/1.1\r\nHost: test\r\n");
            for ($i = 0; $i < 20; $i++) { // 20 silent connections over about 1 s: 5 s of holding back at 0.25 s each
                $held[] = RawClient::to($server);
                $slow->send("X-Slow-$i: yes\r\n");
                usleep(50_000);
            }
            $client = RawClient::to($server);
            $client->send("GET /page.php HTTP/1.1\r\nHost: test\r\n\r\n");
            $started = microtime(true);
            $response = $client->readResponse(10.0);
            self::assertSame(200, $response['status'] ?? null);
            self::assertLessThan(1.0, microtime(true) - $started, 'kept out by connections that say nothing');
            $client->close();
            $slow->close();
        } finally {
            foreach ($held as $connection) {
                $connection->close();
            }
            $server?->stop();
            PeerProcess::removeDir($root);
        }
    }
}
