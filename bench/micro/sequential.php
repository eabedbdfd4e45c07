<?php

declare(strict_types=1);

/*
 * The sequential tier's own cost per request, without the network: DocumentRoot::handle() for
 * `GET /hello.php` of bench/www-site, called in a loop in a process working in the document root (as a
 * worker serving it does). Wall clock per request, or instructions under callgrind:
 *
 *   php -d opcache.enable_cli=1 -d opcache.jit=tracing -d opcache.jit_buffer_size=64M \
 *     -d opcache.file_update_protection=0 bench/micro/sequential.php [N]
 *   valgrind --tool=callgrind --callgrind-out-file=/dev/null php -d opcache.enable_cli=1 -d opcache.jit=0 \
 *     -d opcache.file_update_protection=0 bench/micro/sequential.php N      (run with N and 2N, divide the
 *                                                                            difference by N)
 *
 * The loop runs inside a function: the tier puts the global variables back after every script, and a
 * loop counter at top level would be one of them.
 */

require __DIR__ . '/../../src/bootstrap.php';

use Kiln\Http\Limits;
use Kiln\Http\Request;
use Kiln\Http\Wire\RequestHead;
use Kiln\Http\Wire\RequestParser;
use Kiln\Site\DocumentRoot;
use Kiln\Site\SiteConfig;

(static function (int $n): void {
    $parser = new RequestParser(new Limits());
    $parser->feed("GET /hello.php HTTP/1.1\r\nHost: localhost:8080\r\nUser-Agent: micro\r\nAccept: */*\r\n\r\n");
    $head = $parser->next();
    if (!$head instanceof RequestHead) {
        throw new RuntimeException('the request did not parse');
    }
    $request = new Request($head, '', null, '127.0.0.1', 50000, '127.0.0.1', 8080);
    $site = DocumentRoot::forSite(__DIR__ . '/../www-site/public', SiteConfig::create(tier: 'sequential'));
    chdir($site->root());
    for ($i = 0; $i < 2000; $i++) { // warm-up: the runtime's probes, opcache, the JIT's traces
        $site->handle($request);
    }
    $start = hrtime(true);
    for ($i = 0; $i < $n; $i++) {
        $response = $site->handle($request);
    }
    $ns = hrtime(true) - $start;
    if (!isset($response) || $response->status() !== 200) {
        throw new RuntimeException('hello.php did not answer 200');
    }
    printf("sequential tier: %d requests, %.2f µs/request\n", $n, $ns / 1e3 / $n);
})((int) ($argv[1] ?? 100000));
