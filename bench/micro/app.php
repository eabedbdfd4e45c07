<?php

declare(strict_types=1);

// Per-request cost of the App layer, without sockets: App::handle() for /hello through the example
// app (router + RequestId middleware + invoker + result conversion) against the bare handler.
// php -d opcache.enable_cli=1 -d opcache.jit_buffer_size=64M -d opcache.jit=tracing bench/micro/app.php

require __DIR__ . '/../../src/bootstrap.php';

use Kiln\App\App;
use Kiln\Http\Request;
use Kiln\Http\Wire\RequestHead;

$head = new RequestHead('GET', '/hello', '1.1', ['host' => ['x']], '/hello', '', 'x', RequestHead::BODY_NONE, 0, true, false);
$jsonHead = new RequestHead('GET', '/json', '1.1', ['host' => ['x']], '/json', '', 'x', RequestHead::BODY_NONE, 0, true, false);
$handlers = [
    'bare' => App::load(__DIR__ . '/../apps/bare.php'),
    'app' => App::load(__DIR__ . '/../../examples/hello/app.php'),
];
$n = 200000;
foreach ([1, 2, 3] as $round) {
    foreach ($handlers as $name => $handler) {
        foreach (['/hello' => $head, '/json' => $jsonHead] as $path => $h) {
            $start = hrtime(true);
            for ($i = 0; $i < $n; $i++) {
                $handler->handle(new Request($h, '', null, '127.0.0.1', 1));
            }
            $us = (hrtime(true) - $start) / 1e3 / $n;
            printf("round %d  %-5s %-7s %6.2f µs/request\n", $round, $name, $path, $us);
        }
    }
}
