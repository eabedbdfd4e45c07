<?php

declare(strict_types=1);

/**
 * Parser micro-benchmark: requests/s for feed() + next() until null on one keep-alive parser, and
 * ResponseEncoder::head() calls/s. Best of 5 rounds per case (the figure least disturbed by other load).
 * Usage: php bench/micro/parser.php [seconds per round, default 0.5]
 */

use Kiln\Http\Limits;
use Kiln\Http\Wire\RequestParser;
use Kiln\Http\Wire\ResponseEncoder;

require __DIR__ . '/../lib/autoload.php';

$seconds = (float) ($argv[1] ?? 0.5);
$rounds = 5;

$browser = "GET /products/view?id=12345&ref=home HTTP/1.1\r\n"
    . "Host: shop.example.com\r\n"
    . "User-Agent: Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0\r\n"
    . "Accept: text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8\r\n"
    . "Accept-Language: en-US,en;q=0.5\r\n"
    . "Accept-Encoding: gzip, deflate, br\r\n"
    . "Connection: keep-alive\r\n"
    . "Cookie: session=8f14e45fceea167a5a36dedd4bea2543\r\n"
    . "Upgrade-Insecure-Requests: 1\r\n"
    . "\r\n";
$wrk = "GET / HTTP/1.1\r\nHost: localhost:8080\r\n\r\n";

/** @return array{float, int} requests/s, bytes */
function measure(RequestParser $parser, string $request, float $seconds): array
{
    $batch = 10000;
    $done = 0;
    $start = hrtime(true);
    $deadline = $start + (int) ($seconds * 1e9);
    do {
        for ($i = 0; $i < $batch; $i++) {
            $parser->feed($request);
            while ($parser->next() !== null) {
            }
        }
        $done += $batch;
        $now = hrtime(true);
    } while ($now < $deadline);
    return [$done / (($now - $start) / 1e9), strlen($request)];
}

printf("PHP %s, opcache.jit=%s\n", PHP_VERSION, ini_get('opcache.jit') ?: 'off');
foreach (['browser GET' => $browser, 'wrk GET' => $wrk] as $name => $request) {
    $rate = 0.0;
    for ($r = 0; $r < $rounds; $r++) {
        [$rate, $bytes] = [max($rate, measure(new RequestParser(new Limits()), $request, $seconds)[0]), strlen($request)];
    }
    printf("%-12s %4d bytes  %9.0f req/s  %5.2f µs/req\n", $name, $bytes, $rate, 1e6 / $rate);
}

$encoder = new ResponseEncoder();
$headers = ['Content-Type' => 'text/plain; charset=utf-8'];
$best = 0.0;
for ($r = 0; $r < $rounds; $r++) {
    $n = 0;
    $start = hrtime(true);
    do {
        for ($i = 0; $i < 10000; $i++) {
            $encoder->head(200, $headers, 13, '1.1', true);
        }
        $n += 10000;
        $elapsed = (hrtime(true) - $start) / 1e9;
    } while ($elapsed < $seconds);
    $best = max($best, $n / $elapsed);
}
printf("%-12s %4s        %9.0f heads/s %5.2f µs/head\n", 'encoder', '', $best, 1e6 / $best);
