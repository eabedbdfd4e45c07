<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Sequential;

use Kiln\Tests\Support\HttpClient;
use Kiln\Tests\Support\KilnProcess;
use PHPUnit\Framework\TestCase;

/**
 * A script that ends its worker (exit(), a shutdown function, which the tier runs by ending the worker, or a
 * fatal error) while the same worker is sending another client a large file: that download still arrives whole, and
 * the worker's replacement serves new requests while it does.
 */
final class ExitWithResponsesUnderWayTest extends TestCase
{
    /** Larger than what loopback's socket buffers hold, so the response is still under way when the script ends. */
    private const SIZE = 48 << 20;

    private string $root;

    private ?KilnProcess $server = null;

    protected function setUp(): void
    {
        $this->root = sys_get_temp_dir() . '/kiln-underway-' . getmypid() . '-' . bin2hex(random_bytes(3));
        mkdir($this->root . '/public', 0755, true);
        $block = hash('sha256', 'kiln', true);
        file_put_contents($this->root . '/public/big.bin', str_repeat($block . random_bytes(32), self::SIZE >> 6));
        file_put_contents($this->root . '/public/redirect-exit.php', '<?php header("Location: /elsewhere"); exit;');
        file_put_contents($this->root . '/public/shutdown.php', '<?php register_shutdown_function(static function (): void {}); echo "page";');
        file_put_contents($this->root . '/public/fatal.php', '<?php echo "half a page"; function strlen() {}');
        file_put_contents($this->root . '/public/pid.php', '<?php echo getmypid();');
        file_put_contents($this->root . '/public/large.php', '<?php echo str_repeat("k", 24 << 20);');
    }

    protected function tearDown(): void
    {
        $this->server?->stop();
        $this->server = null;
        foreach (glob($this->root . '/public/*') ?: [] as $file) {
            unlink($file);
        }
        @unlink($this->root . '/mark');
        @rmdir($this->root . '/public');
        @rmdir($this->root);
    }

    /** @return iterable<string, array{string, int}> */
    public static function endings(): iterable
    {
        yield 'exit() after a redirect' => ['/redirect-exit.php', 302];
        yield 'a shutdown function' => ['/shutdown.php', 200];
        yield 'a fatal error' => ['/fatal.php', 500];
    }

    /** @dataProvider endings */
    public function testADownloadOnTheSameWorkerArrivesWholeAndTheReplacementServesMeanwhile(string $script, int $status): void
    {
        $this->server = KilnProcess::start($this->root, ['--workers=1', '--tier=sequential', '--front-controller=none']);
        $base = $this->server->baseUrl();
        $first = (int) HttpClient::get("$base/pid.php")['body'];

        [$download, $received] = $this->startDownload();

        $ended = HttpClient::get($base . $script);
        self::assertSame($status, $ended['status']);

        // The worker's replacement takes new connections while the old one still holds the download.
        $deadline = microtime(true) + 10.0;
        do {
            $pid = (int) HttpClient::get("$base/pid.php")['body'];
        } while ($pid === $first && microtime(true) < $deadline && usleep(20_000) === null);
        self::assertNotSame($first, $pid, 'no replacement answered within 10 s');
        self::assertTrue(posix_kill($first, 0), 'the old worker is still sending the download');

        $this->finishDownload($download, $received, $first);
    }

    /** The script's time limit was still armed when it exited: its alarm must not end the worker's last work. */
    public function testTheTimeLimitOfTheScriptThatExitedDoesNotCutTheDownload(): void
    {
        $this->server = KilnProcess::start($this->root, ['--workers=1', '--tier=sequential', '--front-controller=none', '--time-limit=1']);
        $first = (int) HttpClient::get($this->server->baseUrl() . '/pid.php')['body'];
        [$download, $received] = $this->startDownload();
        self::assertSame(302, HttpClient::get($this->server->baseUrl() . '/redirect-exit.php')['status']);
        usleep(2_500_000); // past the time limit and the second of slack after it, with the download unread
        $this->finishDownload($download, $received, $first);
        self::assertStringNotContainsString('ran past the time limit', $this->server->log());
    }

    /**
     * A large page (queued whole: its script returned, the connection waits for the client's next request)
     * read slowly by its client, when another script exits: it is finished like a file, not given the
     * shutdown's two seconds.
     */
    public function testALargePageStillBeingWrittenWhenAnotherScriptExitsArrivesWhole(): void
    {
        $this->server = KilnProcess::start($this->root, ['--workers=1', '--tier=sequential', '--front-controller=none']);
        $client = stream_socket_client("tcp://127.0.0.1:{$this->server->port()}", $errno, $error, 5.0);
        self::assertNotFalse($client, $error);
        fwrite($client, "GET /large.php HTTP/1.1\r\nHost: test\r\n\r\n");
        stream_set_timeout($client, 5);
        $received = (string) fread($client, 65536);
        self::assertStringStartsWith('HTTP/1.1 200', $received);
        self::assertSame(302, HttpClient::get($this->server->baseUrl() . '/redirect-exit.php')['status']);
        usleep(2_500_000); // past the shutdown's own budget for blocking writes
        $received .= self::readToEnd($client, 15.0);
        fclose($client);
        self::assertSame(str_repeat('k', 24 << 20), explode("\r\n\r\n", $received, 2)[1] ?? '', 'the page was cut; log: ' . $this->server->log());
        $this->server->waitForLog('/finished 1 of 1 response\(s\) under way/');
    }

    /** A shutdown function that calls exit() makes PHP skip the finishing: what that cut is logged. */
    public function testWhenAShutdownFunctionExitsTheCutIsLogged(): void
    {
        file_put_contents($this->root . '/public/shutdown-exit.php', '<?php register_shutdown_function(static function (): void { exit; }); echo "page";');
        $this->server = KilnProcess::start($this->root, ['--workers=1', '--tier=sequential', '--front-controller=none']);
        [$download] = $this->startDownload();
        self::assertSame('page', HttpClient::get($this->server->baseUrl() . '/shutdown-exit.php')['body']);
        $this->server->waitForLog('/cut 1 response\(s\) under way: a shutdown function called exit\(\)/');
        fclose($download);
    }

    /**
     * A client that pipelines a large page and then a script that exits: the large page is still being
     * written when the script ends the worker; both responses arrive, in order.
     */
    public function testAPipelinedScriptThatExitsBehindALargePageStillGetsItsOwnResponse(): void
    {
        $this->server = KilnProcess::start($this->root, ['--workers=1', '--tier=sequential', '--front-controller=none']);
        $client = stream_socket_client("tcp://127.0.0.1:{$this->server->port()}", $errno, $error, 5.0);
        self::assertNotFalse($client, $error);
        fwrite($client, "GET /large.php HTTP/1.1\r\nHost: test\r\n\r\nGET /redirect-exit.php HTTP/1.1\r\nHost: test\r\n\r\n");
        stream_set_timeout($client, 10);
        $received = self::readToEnd($client, 15.0);
        fclose($client);
        [$head, $rest] = explode("\r\n\r\n", $received, 2) + ['', ''];
        self::assertStringStartsWith('HTTP/1.1 200', $head);
        self::assertSame(str_repeat('k', 24 << 20), substr($rest, 0, 24 << 20), 'the large page');
        self::assertStringStartsWith('HTTP/1.1 302', substr($rest, 24 << 20), 'the exiting script\'s own response; log: ' . $this->server->log());
    }

    /**
     * A coroutine handler suspended in its Fiber (pipelined behind a large response still being written)
     * when a script ends the worker: it gets no chance to run again, even though the worker's loop runs once
     * more; the script's own response still arrives.
     */
    public function testACoroutineHandlerSuspendedWhenAScriptExitsNeverRunsAgain(): void
    {
        $mark = $this->root . '/mark';
        $this->server = KilnProcess::start(__DIR__ . '/../../Fixtures/exit-mixed/app.php', ['--workers=1'], ['KILN_TEST_MARK' => $mark]);
        $client = stream_socket_client("tcp://127.0.0.1:{$this->server->port()}", $errno, $error, 5.0);
        self::assertNotFalse($client, $error);
        fwrite($client, "GET /large HTTP/1.1\r\nHost: test\r\n\r\nGET /slow HTTP/1.1\r\nHost: test\r\n\r\n");
        usleep(300_000); // /large is queued and being written; /slow waits in its Fiber
        self::assertSame(302, HttpClient::get($this->server->baseUrl() . '/exit.php')['status']);
        usleep(1_500_000); // past the second /slow waits
        self::assertFileDoesNotExist($mark, 'the suspended handler ran after the worker ended');
        self::assertStringNotContainsString('slow done', (string) stream_get_contents($client, -1));
        fclose($client);
    }

    /**
     * What $socket sends until it closes, or $seconds pass.
     *
     * @param resource $socket
     */
    private static function readToEnd(mixed $socket, float $seconds): string
    {
        $received = '';
        $deadline = microtime(true) + $seconds;
        while (!feof($socket) && microtime(true) < $deadline) {
            $chunk = fread($socket, 1 << 20);
            if ($chunk === false) {
                break;
            }
            $received .= $chunk;
        }
        return $received;
    }

    /** @return array{resource, string} the socket, with the head read and a little of the body */
    private function startDownload(): array
    {
        \assert($this->server !== null);
        $download = stream_socket_client("tcp://127.0.0.1:{$this->server->port()}", $errno, $error, 5.0);
        self::assertNotFalse($download, $error);
        fwrite($download, "GET /big.bin HTTP/1.1\r\nHost: test\r\n\r\n");
        // Read the head and a little of the body, then stop reading: the rest waits in the worker.
        stream_set_timeout($download, 5);
        $received = '';
        while (!str_contains($received, "\r\n\r\n") || \strlen($received) < 65536) {
            $chunk = fread($download, 65536);
            self::assertIsString($chunk);
            self::assertNotSame('', $chunk, 'the download stopped before it began');
            $received .= $chunk;
        }
        [$head, $received] = explode("\r\n\r\n", $received, 2);
        self::assertStringStartsWith('HTTP/1.1 200', $head);
        self::assertStringContainsString('Content-Length: ' . self::SIZE, $head);
        return [$download, $received];
    }

    /**
     * Reads the rest of the download: all of it, then an orderly close; the old worker then ends.
     *
     * @param resource $download
     */
    private function finishDownload(mixed $download, string $received, int $oldWorker): void
    {
        \assert($this->server !== null);
        $received .= self::readToEnd($download, 30.0);
        self::assertSame(self::SIZE, \strlen($received), 'the download was cut; log: ' . $this->server->log());
        self::assertSame(hash_file('sha256', $this->root . '/public/big.bin'), hash('sha256', $received));
        self::assertTrue(feof($download), 'the connection closes once the response is out');
        fclose($download);
        $this->server->waitForLog('/finished 1 of 1 response\(s\) under way/');
        $deadline = microtime(true) + 5.0;
        while (posix_kill($oldWorker, 0) && microtime(true) < $deadline) {
            usleep(20_000);
        }
        self::assertFalse(posix_kill($oldWorker, 0), 'the old worker ends once its download is out');
    }
}
