<?php

declare(strict_types=1);

use Kiln\App\App;
use Kiln\Http\Request;
use Kiln\Http\Response;

use function Kiln\Loop\delay;

$app = new App();

$app->get('/hello', fn() => 'Hello, World!');
$app->get('/json', fn() => ['message' => 'Hello, World!']);

// Describes the body it got without holding it in memory twice: size, md5 (streamed), spooled or not.
$app->any('/echo-info', function (Request $request): array {
    $context = hash_init('md5');
    hash_update_stream($context, $request->bodyStream());
    return [
        'method' => $request->method(),
        'size' => $request->bodySize(),
        'md5' => hash_final($context),
        'spooled' => $request->isBodySpooled(),
        'peak' => memory_get_peak_usage(),
        'pid' => getmypid(),
    ];
});

$app->post('/echo', fn(Request $request) => Response::text($request->body()));

$app->get('/target', fn(Request $request) => [
    'target' => $request->target(), 'path' => $request->path(), 'query' => $request->queryString(), 'host' => $request->host(),
]);

// Streams N chunks of S bytes; records how far it got in a file so a test can see backpressure.
$app->get('/stream', function (Request $request): Generator {
    $query = $request->query();
    $count = (int) ($query['n'] ?? 10);
    $size = (int) ($query['size'] ?? 10);
    $progress = isset($query['progress']) ? (string) $query['progress'] : null;
    for ($i = 0; $i < $count; $i++) {
        if ($progress !== null) {
            file_put_contents($progress, (string) ($i + 1));
        }
        yield str_repeat(chr(97 + $i % 26), $size);
    }
});

$app->get('/big', fn(Request $request) => str_repeat('x', (int) ($request->query()['size'] ?? 1048576)));

$app->get('/sleep', function (Request $request): string {
    delay((float) ($request->query()['s'] ?? 1));
    return 'slept';
});

$app->get('/pid', fn() => (string) getmypid());

// Switches protocols to a line echo: the HTTP layer lets go of the socket after the 101.
$app->get('/upgrade', function (): Response {
    $response = new Response(101, ['Upgrade' => 'echo', 'Connection' => 'Upgrade']);
    $response->setUpgrade(function ($socket, string $early): void {
        if ($early !== '') {
            fwrite($socket, 'echo:' . $early);
        }
        Kiln\Loop\Loop::onReadable($socket, function (string $id, $socket): void {
            $data = fread($socket, 8192);
            if ($data === '' || $data === false) {
                Kiln\Loop\Loop::cancel($id);
                fclose($socket);
                return;
            }
            fwrite($socket, 'echo:' . $data);
        });
    });
    return $response;
});

$app->get('/jit', fn() => ['jit' => Kiln\Cli\JitLauncher::active()]);
$app->get('/opcache', fn() => ['opcache' => function_exists('opcache_get_status') && is_array(@opcache_get_status(false))]);

$app->get('/memory', function (Request $request): array {
    if (isset($request->query()['gc'])) {
        gc_collect_cycles(); // so a test sees what is really kept, not garbage waiting for the collector
    }
    return ['usage' => memory_get_usage(), 'peak' => memory_get_peak_usage(), 'gc' => gc_status()['runs']];
});

$app->get('/throw', function (): never {
    throw new RuntimeException('boom');
});

$app->get('/bad-header', function (): Response {
    $response = new Response(200, [], 'never sent');
    $response->setHeader('X-Injected', "a\r\nSet-Cookie: evil=1");
    return $response;
});

$app->get('/status', fn(Request $request) => (int) ($request->query()['code'] ?? 204));

// A body that is no longer a stream (closed): the server must answer 500, not hang the connection.
$app->get('/closed-stream', function (): Response {
    $stream = fopen('php://memory', 'r');
    fclose($stream);
    return new Response(200, [], $stream);
});

// A pipe (not a regular file) that produces its output after s seconds: read without blocking the worker.
$app->get('/pipe', function (Request $request): Response {
    $seconds = (float) ($request->query()['s'] ?? 0.5);
    $pipe = popen('sleep ' . escapeshellarg((string) $seconds) . '; printf piped', 'r');
    return new Response(200, ['Content-Type' => 'text/plain'], $pipe);
});

return $app;
