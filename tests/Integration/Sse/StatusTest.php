<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Sse;

use Kiln\Tests\Support\KilnProcess;
use Kiln\Tests\Support\SseClient;
use PHPUnit\Framework\TestCase;

final class StatusTest extends TestCase
{
    private const APP = __DIR__ . '/../../Fixtures/sse/app.php';

    public function testKilnStatusCountsTheOpenEventStreamsOfEachWorker(): void
    {
        $pidFile = sys_get_temp_dir() . '/kiln-test-' . bin2hex(random_bytes(4)) . '.pid';
        $kiln = KilnProcess::start(self::APP, ["--pid-file=$pidFile", '--workers=1']);
        $clients = [];
        try {
            foreach (range(1, 3) as $i) {
                $clients[] = $client = new SseClient($kiln->host(), $kiln->port(), '/events/status');
                $client->readWorkerPid();
            }
            self::assertSame(3, self::streamsOnceSettled($pidFile, 3));
            $clients[0]->close();
            self::assertSame(2, self::streamsOnceSettled($pidFile, 2));
            // Each connection counts under one kind: the two streams are `sse`, not `http` too.
            $line = '~^  worker 1  pid \d+  ready  requests \d+  in flight \d+  http 0  websockets 0  sse 2  ~m';
            $deadline = microtime(true) + 10.0;
            while (true) {
                [$code, $stdout] = KilnProcess::run(['status', "--pid-file=$pidFile"]);
                self::assertSame(0, $code);
                if (preg_match($line, $stdout) === 1 || microtime(true) >= $deadline) {
                    break;
                }
                usleep(100_000);
            }
            self::assertMatchesRegularExpression($line, $stdout);
        } finally {
            foreach ($clients as $client) {
                $client->close();
            }
            $kiln->stop();
        }
    }

    /** What `kiln status --json` counts once it shows $expected (workers report once a second), or after 10 s. */
    private static function streamsOnceSettled(string $pidFile, int $expected): int
    {
        $deadline = microtime(true) + 10.0;
        do {
            [, $json] = KilnProcess::run(['status', '--json', "--pid-file=$pidFile"]);
            $status = json_decode($json, true);
            $workers = \is_array($status) && \is_array($status['workers'] ?? null) ? $status['workers'] : [];
            $count = (int) array_sum(array_column($workers, 'sse'));
            if ($count === $expected) {
                return $count;
            }
            usleep(100_000);
        } while (microtime(true) < $deadline);
        return $count;
    }
}
