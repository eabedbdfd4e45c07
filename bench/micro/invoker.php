<?php

declare(strict_types=1);

/*
 * Micro benchmark of handler invocation: `php bench/micro/invoker.php`.
 * µs per HandlerInvoker::invoke() (resolve from cache, inject, capture echo, convert the result), against a
 * bare call of the same closure. Ratios within one run matter; absolute numbers depend on the machine.
 */

use Kiln\App\App;
use Kiln\App\Context;
use Kiln\App\Handler\HandlerInvoker;
use Kiln\Http\Request;
use Kiln\Http\Response;
use Kiln\Http\Wire\RequestHead;

require __DIR__ . '/../lib/autoload.php';

/** @return float nanoseconds per iteration */
function measure(int $n, Closure $body): float
{
    $body(1000); // warm caches
    $start = hrtime(true);
    $body($n);

    return (hrtime(true) - $start) / $n;
}

function report(string $name, float $ns, ?float $baseline = null): void
{
    printf("%-52s %9.3f µs%s\n", $name, $ns / 1000, $baseline === null ? '' : sprintf('   (%.2f×)', $ns / $baseline));
}

final class BenchController
{
    public function show(int $id): string
    {
        return 'user ' . $id;
    }
}

$head = new RequestHead('GET', '/users/42', '1.1', ['host' => ['x']], '/users/42', '', 'x', RequestHead::BODY_NONE, 0, true, false);
$request = new Request($head, '', null, '127.0.0.1', 1234);
$params = ['id' => '42'];
$context = new Context($request, $params);
$app = new App();
$invoker = new HandlerInvoker();
$n = 300_000;

$cases = [
    "fn () => 'x'" => static fn() => 'x',
    "fn (Request \$r) => 'x'" => static fn(Request $r) => 'x',
    "fn (int \$id) => 'user ' . \$id" => static fn(int $id) => 'user ' . $id,
    "fn (Request \$r, Context \$c, int \$id) => [...]" => static fn(Request $r, Context $c, int $id) => ['id' => $id],
    "fn () => print 'x' (echo, null return)" => static function (): void {
        echo 'x';
    },
    "fn (Response \$res) => setBody" => static function (Response $res): void {
        $res->setBody('x');
    },
    "[BenchController::class, 'show'] (int \$id)" => [BenchController::class, 'show'],
];

echo "HandlerInvoker::invoke, $n calls each (params: id=42)\n";
$bare = measure($n, static function (int $n): void {
    $handler = static fn() => 'x';
    for ($i = 0; $i < $n; $i++) {
        new Response(200, ['Content-Type' => 'text/html; charset=utf-8'], $handler());
    }
});
report("bare call of fn () => 'x' + new Response", $bare);
foreach ($cases as $name => $handler) {
    $ns = measure($n, static function (int $n) use ($invoker, $handler, $request, $params, $context, $app): void {
        for ($i = 0; $i < $n; $i++) {
            $invoker->invoke($handler, $request, $params, $context, $app);
        }
    });
    report($name, $ns, $bare);
}
$fiber = new Fiber(static function () use ($invoker, $request, $params, $context, $app, $n): void {
    $handler = static fn(Request $r) => 'x';
    report("fn (Request \$r) => 'x' inside a Fiber", measure($n, static function (int $n) use ($invoker, $handler, $request, $params, $context, $app): void {
        for ($i = 0; $i < $n; $i++) {
            $invoker->invoke($handler, $request, $params, $context, $app);
        }
    }));
});
$fiber->start();
