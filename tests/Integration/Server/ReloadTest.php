<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Server;

use Kiln\Tests\Support\HttpClient;
use Kiln\Tests\Support\KilnProcess;
use Kiln\Tests\Support\PeerProcess;
use Kiln\Tests\Support\RawClient;
use PHPUnit\Framework\TestCase;

final class ReloadTest extends TestCase
{
    private const APP = __DIR__ . '/../../Fixtures/server/app.php';

    public function testHupUnderContinuousLoadFailsNoRequestAndReplacesEveryWorker(): void
    {
        $kiln = KilnProcess::start(self::APP);
        $before = $kiln->workerPids();
        self::assertCount(2, $before, 'the workers a reload must replace');
        $failures = [];
        $served = 0;
        $reloadAt = microtime(true) + 1.0;
        $end = microtime(true) + 3.0;
        $keepAlive = null;
        while (microtime(true) < $end) {
            if ($reloadAt !== null && microtime(true) >= $reloadAt) {
                $kiln->signal(SIGHUP);
                $reloadAt = null;
            }
            try {
                self::assertSame(200, HttpClient::get($kiln->baseUrl() . '/', [], 5)['status']);
                $served++;
                $keepAlive = $this->keepAliveGet($kiln->port(), $keepAlive);
                $served++;
            } catch (\Throwable $e) {
                $failures[] = $e->getMessage();
                $keepAlive = null;
            }
        }
        self::assertSame([], $failures, "failed requests during reload:\n" . implode("\n", $failures) . "\n" . $kiln->log());
        self::assertGreaterThan(20, $served);
        $kiln->waitForLog('~reloaded: generation 2 serving~', 5);
        self::assertSame([], array_intersect($before, $this->settledPids($kiln, $before)), 'every worker was replaced');
        self::assertSame(0, $kiln->stop());
    }

    /**
     * A client that keeps its connection and sends its next request just as its worker begins to drain (a reload)
     * gets an answer, not a closed connection: a drain keeps idle connections open for a short grace and answers
     * what arrives meanwhile with `Connection: close`.
     */
    public function testARequestSentOnAKeptConnectionAsItsWorkerDrainsIsAnswered(): void
    {
        $kiln = KilnProcess::start(self::APP, ['--workers=1', '--log-level=debug']);
        $client = RawClient::to($kiln);
        $client->send("GET /pid HTTP/1.1\r\nHost: kiln.test\r\n\r\n");
        $first = $client->readResponse();
        self::assertNotNull($first);
        self::assertArrayNotHasKey('connection', $first['headers']);
        $pid = $first['body'];

        $kiln->signal(SIGHUP);
        $kiln->waitForLog('~worker 1 \(pid ' . $pid . '\) is stopping: drain requested~', 10);
        $client->send("GET /pid HTTP/1.1\r\nHost: kiln.test\r\n\r\n");
        $second = $client->readResponse();
        self::assertNotNull($second, "the kept connection was closed under the request\n" . $kiln->log());
        self::assertSame(200, $second['status']);
        self::assertSame($pid, $second['body'], 'answered by the draining worker');
        self::assertSame(['close'], $second['headers']['connection'] ?? []);
        self::assertTrue($client->isClosedWithin(5));
        $kiln->waitForLog('~worker 1 \(pid ' . $pid . '\) exited with code 0~', 10);
        self::assertSame(0, $kiln->stop());
    }

    public function testAReloadWhoseNewCodeFailsKeepsTheOldWorkersServing(): void
    {
        $flag = sys_get_temp_dir() . '/kiln-test-fail-' . bin2hex(random_bytes(4));
        $pidFile = "$flag.pid";
        $kiln = KilnProcess::start(self::APP, ["--pid-file=$pidFile"], ['KILN_TEST_FAIL_FLAG' => $flag]);
        $before = $kiln->workerPids();
        self::assertCount(2, $before, 'the workers that must keep serving');
        touch($flag);
        try {
            $kiln->signal(SIGHUP);
            $kiln->waitForLog('~reload failed, generation 1 keeps serving: .*fixture asked to fail at boot~', 10);
        } finally {
            @unlink($flag);
        }
        self::assertSame(200, HttpClient::get($kiln->baseUrl() . '/')['status']);
        self::assertSame($before, $this->settledPids($kiln, $before));
        // kiln status: the workers that kept serving were not restarted (the status file is rewritten every second).
        usleep(1_200_000);
        [$code, $json] = KilnProcess::run(['status', '--json', "--pid-file=$pidFile"]);
        self::assertSame(0, $code);
        $status = json_decode($json, true, flags: JSON_THROW_ON_ERROR);
        self::assertIsArray($status);
        self::assertIsArray($status['workers']);
        self::assertSame([0, 0], array_column($status['workers'], 'restarts'), 'two workers, neither restarted');
        self::assertSame(0, $kiln->stop());
    }

    /**
     * The workers share the supervisor's opcache, whose own timestamp checks follow a clock the CLI never moves:
     * without the supervisor's check, the new generation ran the old code of an edited app.
     */
    public function testAReloadServesTheCodeAsEditedOnDisk(): void
    {
        $dir = PeerProcess::tempDir('kiln-reload-code');
        $kiln = null;
        try {
            file_put_contents("$dir/app.php", '<?php $app = new Kiln\App\App(); $app->get("/", fn() => (require __DIR__ . "/answer.php") . "|" . (opcache_is_script_cached(__DIR__ . "/answer.php") ? "cached" : "not cached")); return $app;');
            file_put_contents("$dir/answer.php", '<?php return "one";');
            touch("$dir/app.php", time() - 60);
            touch("$dir/answer.php", time() - 60);
            $kiln = KilnProcess::start("$dir/app.php", ['--workers=1']);
            self::assertSame('one|cached', HttpClient::get($kiln->baseUrl() . '/')['body']);
            file_put_contents("$dir/answer.php", '<?php return "two";');
            touch("$dir/answer.php", time() - 30); // another modification time, at once
            $kiln->signal(SIGHUP);
            $kiln->waitForLog('~reloaded: generation 2 serving~', 10);
            self::assertSame('two|cached', HttpClient::get($kiln->baseUrl() . '/')['body'], $kiln->log());
            self::assertSame(0, $kiln->stop());
        } finally {
            $kiln?->isRunning() && $kiln->stop();
            PeerProcess::removeDir($dir);
        }
    }

    /**
     * A reload asked while another is under way (an edit, SIGHUP, another edit, SIGHUP) follows it: it was ignored, and
     * the generation that was starting served the code as it was before the second edit, until the next reload.
     */
    public function testAReloadAskedDuringAReloadFollowsItAndServesTheLastEdit(): void
    {
        $dir = PeerProcess::tempDir('kiln-reload-twice');
        $kiln = null;
        try {
            // The app takes 0.7 s to load, which leaves time to ask again while a generation starts.
            file_put_contents("$dir/app.php", '<?php usleep(700_000); $app = new Kiln\App\App(); $app->get("/", fn() => require __DIR__ . "/answer.php"); return $app;');
            file_put_contents("$dir/answer.php", '<?php return "one";');
            touch("$dir/app.php", time() - 60);
            touch("$dir/answer.php", time() - 60);
            $kiln = KilnProcess::start("$dir/app.php", ['--workers=1'], [], 20.0);
            self::assertSame('one', HttpClient::get($kiln->baseUrl() . '/')['body']);

            file_put_contents("$dir/answer.php", '<?php return "two";');
            touch("$dir/answer.php", time() - 40);
            $kiln->signal(SIGHUP);
            $kiln->waitForLog('~reloading: starting generation 2~', 10);
            file_put_contents("$dir/answer.php", '<?php return "three";');
            touch("$dir/answer.php", time() - 20);
            $kiln->signal(SIGHUP);

            $kiln->waitForLog('~reloaded: generation 3 serving~', 20);
            self::assertSame('three', HttpClient::get($kiln->baseUrl() . '/')['body'], $kiln->log());
            self::assertStringContainsString('reload asked while one is under way', $kiln->log());
            self::assertSame(0, $kiln->stop());
        } finally {
            $kiln?->isRunning() && $kiln->stop();
            PeerProcess::removeDir($dir);
        }
    }

    /**
     * One request on a persistent connection, reconnecting when the server closed it while idle (a drained
     * worker closes idle keep-alive connections; like any HTTP client, retry an idempotent request then).
     *
     * @param resource|null $socket
     * @return resource
     */
    private function keepAliveGet(int $port, mixed $socket): mixed
    {
        for ($attempt = 0; $attempt < 2; $attempt++) {
            $reused = $socket !== null;
            $socket ??= stream_socket_client("tcp://127.0.0.1:$port", $errno, $errstr, 5)
                ?: throw new \RuntimeException("connect failed: $errstr");
            stream_set_timeout($socket, 5);
            $head = '';
            if (@fwrite($socket, "GET / HTTP/1.1\r\nHost: x\r\n\r\n") !== false) {
                while (!str_contains($head, "\r\n\r\n") && ($chunk = fread($socket, 8192)) !== false && $chunk !== '') {
                    $head .= $chunk;
                }
            }
            if ($head === '' && $reused) {
                fclose($socket);
                $socket = null;
                continue;
            }
            if (preg_match('~^HTTP/1\.1 200 .*?content-length: (\d+)~is', $head, $m) !== 1) {
                throw new \RuntimeException('keep-alive request failed: ' . ($head === '' ? 'connection closed' : substr($head, 0, 100)));
            }
            $body = substr($head, (int) strpos($head, "\r\n\r\n") + 4);
            while (\strlen($body) < (int) $m[1] && ($chunk = fread($socket, 8192)) !== false && $chunk !== '') {
                $body .= $chunk;
            }
            if (stripos($head, 'connection: close') !== false) {
                fclose($socket);
                $socket = null;
                return $this->keepAliveGet($port, null);
            }
            return $socket;
        }
        throw new \RuntimeException('keep-alive request failed twice');
    }

    /**
     * @param list<int> $before
     * @return list<int>
     */
    private function settledPids(KilnProcess $kiln, array $before): array
    {
        $deadline = microtime(true) + 10;
        do {
            $pids = $kiln->workerPids();
            if (\count($pids) === \count($before)) {
                return $pids;
            }
            usleep(20_000);
        } while (microtime(true) < $deadline);
        self::fail('worker count never settled: ' . implode(',', $pids));
    }
}
