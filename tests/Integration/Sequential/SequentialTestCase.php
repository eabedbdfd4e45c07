<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Sequential;

use Kiln\Tests\Support\KilnProcess;
use Kiln\Tests\Support\RawClient;
use PHPUnit\Framework\TestCase;

/**
 * A real server running tests/Fixtures/sequential/public through the sequential tier (one worker unless
 * asked otherwise, so consecutive requests share one process), and the requests the tests send it.
 */
abstract class SequentialTestCase extends TestCase
{
    protected const APP = __DIR__ . '/../../Fixtures/sequential/app.php';

    protected ?KilnProcess $server = null;

    protected function tearDown(): void
    {
        $this->server?->stop();
        $this->server = null;
    }

    /** @param array<string, string> $env */
    protected function startServer(array $env = [], int $workers = 1): KilnProcess
    {
        return $this->server = KilnProcess::start(self::APP, ["--workers=$workers"], $env);
    }

    protected function server(): KilnProcess
    {
        return $this->server ?? $this->startServer();
    }

    /**
     * One request on its own connection.
     *
     * @param array<string, string> $headers
     * @return array{status: int, reason: string, headers: array<string, list<string>>, body: string, raw: string}
     */
    protected function request(string $method, string $target, array $headers = [], string $body = '', float $timeout = 5.0): array
    {
        $client = RawClient::to($this->server());
        $client->send(self::encode($method, $target, $headers + ['Connection' => 'close'], $body));
        $response = $client->readResponse($timeout, $method === 'HEAD');
        $client->close();
        self::assertNotNull($response, "$method $target: the connection closed without a response; log:\n" . $this->server()->log());
        return $response;
    }

    /**
     * @param array<string, string> $headers
     * @return array{status: int, reason: string, headers: array<string, list<string>>, body: string, raw: string}
     */
    protected function get(string $target, array $headers = []): array
    {
        return $this->request('GET', $target, $headers);
    }

    /**
     * The JSON body of a response, decoded.
     *
     * @param array{body: string} $response
     * @return array<string, mixed>
     */
    protected static function json(array $response): array
    {
        $data = json_decode($response['body'], true);
        self::assertIsArray($data, 'not a JSON object: ' . $response['body']);
        return $data;
    }

    /** @param array<string, string> $headers */
    protected static function encode(string $method, string $target, array $headers, string $body = ''): string
    {
        $head = "$method $target HTTP/1.1\r\nHost: test\r\n";
        foreach ($headers as $name => $value) {
            $head .= "$name: $value\r\n";
        }
        if ($body !== '' || \in_array($method, ['POST', 'PUT'], true)) {
            $head .= 'Content-Length: ' . \strlen($body) . "\r\n";
        }
        return "$head\r\n$body";
    }

    /** The pid of the worker that answers now. */
    protected function workerPid(): int
    {
        return (int) $this->get('/pid.php')['body'];
    }

    /** Waits until the only worker is another process than $dead; returns its pid. */
    protected function waitForReplacement(int $dead): int
    {
        $deadline = microtime(true) + 10.0;
        while (microtime(true) < $deadline) {
            $pids = $this->server()->workerPids();
            if (\count($pids) === 1 && $pids[0] !== $dead) {
                return $pids[0];
            }
            usleep(20_000);
        }
        self::fail("worker $dead was not replaced within 10 s; log:\n" . $this->server()->log());
    }

    /**
     * @param list<array{string, string, string}> $parts field name, filename (or '' for a plain field), content
     * @return array{string, string} content type, body
     */
    protected static function multipart(array $parts): array
    {
        $boundary = 'kiln' . bin2hex(random_bytes(8));
        $body = '';
        foreach ($parts as [$name, $filename, $content]) {
            $body .= "--$boundary\r\nContent-Disposition: form-data; name=\"$name\""
                . ($filename === '' ? '' : "; filename=\"$filename\"\r\nContent-Type: text/plain") . "\r\n\r\n$content\r\n";
        }
        return ["multipart/form-data; boundary=$boundary", "$body--$boundary--\r\n"];
    }
}
