<?php

declare(strict_types=1);

namespace Kiln\Tests\Conformance\Static;

/**
 * A client that reads a little of a 1 GiB file and then stops reading costs the worker its socket and
 * nothing else: one worker keeps answering others at once, and its memory does not grow with the file.
 */
final class SlowReaderTest extends StaticTestCase
{
    private const GIB = 1 << 30;

    private const MAX_GROWTH_KIB = 32 * 1024;

    public function testASlowReaderOfAHugeFileLeavesTheWorkerFreeAndSmall(): void
    {
        $site = self::site();
        $big = fopen($site->path('huge.bin'), 'wb');
        self::assertNotFalse($big);
        ftruncate($big, self::GIB); // sparse: no disk, no page cache until read
        fwrite($big, 'HEAD');
        fseek($big, self::GIB - 4);
        fwrite($big, 'TAIL');
        fclose($big);
        self::assertSame(200, self::get('/hello.txt')['status']); // warm up the worker
        $before = $this->workerRss();

        $slow = $this->startSlowRead('/huge.bin');
        self::assertStringContainsString('Content-Length: ' . self::GIB . "\r\n", $slow['head']);
        self::assertStringStartsWith('HEAD', $slow['body']);

        // The same (single) worker answers others while the slow reader sits on its response.
        $start = microtime(true);
        self::assertSame("Hello, world!\n", self::get('/hello.txt')['body']);
        $tail = self::get('/huge.bin', ['Range' => 'bytes=-4']);
        self::assertSame('TAIL', $tail['body']);
        $parts = self::get('/huge.bin', ['Range' => 'bytes=0-3,' . (self::GIB - 4) . '-']);
        self::assertSame(206, $parts['status']);
        self::assertStringContainsString("\r\n\r\nHEAD\r\n", $parts['body']);
        self::assertStringContainsString("\r\n\r\nTAIL\r\n", $parts['body']);
        self::assertLessThan(5.0, microtime(true) - $start);

        // A second slow reader on the on-the-fly gzip path.
        $text = '';
        for ($i = 0; \strlen($text) < 12 << 20; $i++) {
            $text .= md5("a$i") . md5("b$i") . "\n";
        }
        $site->put('big.txt', $text);
        unset($text);
        $slowGzip = $this->startSlowRead('/big.txt', 'Accept-Encoding: gzip');
        self::assertStringContainsString("Content-Encoding: gzip\r\n", $slowGzip['head']);
        self::assertSame(200, self::get('/hello.txt')['status']);

        $growth = $this->workerRss() - $before;
        self::assertLessThan(self::MAX_GROWTH_KIB, $growth, "worker RSS grew by {$growth} KiB while two clients stalled");

        // The stalled readers can go on reading, and leaving mid-body does not hurt the worker.
        $more = '';
        $deadline = microtime(true) + 5;
        while (\strlen($more) < 4 << 20 && microtime(true) < $deadline) {
            $more .= (string) fread($slow['socket'], 1 << 20);
        }
        self::assertGreaterThanOrEqual(4 << 20, \strlen($more));
        fclose($slow['socket']);
        fclose($slowGzip['socket']);
        self::assertSame(200, self::get('/hello.txt')['status']);
    }

    /** @return array{socket: resource, head: string, body: string} after reading about 256 KiB */
    private function startSlowRead(string $path, string $extra = ''): array
    {
        $server = self::server();
        $socket = stream_socket_client("tcp://{$server->host()}:{$server->port()}", $errno, $error, 5);
        self::assertNotFalse($socket, (string) $error);
        stream_set_timeout($socket, 5);
        fwrite($socket, "GET $path HTTP/1.1\r\nHost: x\r\n" . ($extra === '' ? '' : "$extra\r\n") . "\r\n");
        $received = '';
        while (\strlen($received) < 256 << 10) {
            $piece = fread($socket, 65536);
            self::assertNotFalse($piece);
            self::assertFalse(stream_get_meta_data($socket)['timed_out'], 'the response did not start');
            $received .= $piece;
        }
        [$head, $body] = explode("\r\n\r\n", $received, 2) + [1 => ''];
        return ['socket' => $socket, 'head' => $head . "\r\n", 'body' => $body];
    }

    /** The summed resident memory of the server's worker processes, in KiB. */
    private function workerRss(): int
    {
        $pids = self::server()->workerPids();
        self::assertNotSame([], $pids);
        $total = 0;
        foreach ($pids as $pid) {
            $status = (string) @file_get_contents("/proc/$pid/status");
            if (preg_match('/^VmRSS:\s+(\d+) kB/m', $status, $m) === 1) {
                $total += (int) $m[1];
            }
        }
        return $total;
    }
}
