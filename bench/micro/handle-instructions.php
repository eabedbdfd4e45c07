<?php

declare(strict_types=1);

/*
 * CPU instructions of one handle() call, counted by callgrind: the App layer (or any handler) alone, without
 * sockets, the engine or the client, so an App change shows as a few hundred instructions instead of being
 * lost in a whole request's ~50,000. Each request is made and handled inside a Fiber, as the server does.
 *
 *   php bench/micro/handle-instructions.php [app|bare|PATH][:URL-PATH] ... [--jit] [N]
 *   php bench/micro/handle-instructions.php bare bench/micro/one-route.php app app:/json bare:/json
 *   php bench/micro/handle-instructions.php --jit app          tracing JIT on (N defaults to 20000 then)
 *
 * Runs itself under valgrind for N and 2N calls and prints (count(2N) - count(N)) / N. With the JIT the count
 * is steady once N is large enough for the traces to be compiled in both runs (20000 is).
 */

$root = dirname(__DIR__, 2);

if (($argv[1] ?? '') === '--run') {
    // The measured process: N calls of handle() for one app and path.
    require $root . '/src/bootstrap.php';
    [, , $script, $path, $n] = $argv;
    $handler = Kiln\App\App::load($script);
    $head = new Kiln\Http\Wire\RequestHead('GET', $path, '1.1', ['host' => ['x']], $path, '', 'x', Kiln\Http\Wire\RequestHead::BODY_NONE, 0, true, false);
    (new Fiber(static function () use ($handler, $head, $n): void {
        for ($i = 0; $i < (int) $n; $i++) {
            $handler->handle(new Kiln\Http\Request($head, '', null, '127.0.0.1', 1));
        }
    }))->start();
    exit(0);
}

$jit = false;
$n = null;
$apps = [];
foreach (array_slice($argv, 1) as $arg) {
    if ($arg === '--jit') {
        $jit = true;
    } elseif (ctype_digit($arg)) {
        $n = (int) $arg;
    } else {
        $apps[] = $arg;
    }
}
$n ??= $jit ? 20000 : 2000;
$apps = $apps === [] ? ['bare', 'app'] : $apps;

$count = static function (string $script, string $path, int $calls) use ($jit): int {
    $opcache = $jit ? '-d opcache.jit_buffer_size=64M -d opcache.jit=tracing' : '-d opcache.jit=0';
    $command = 'valgrind --tool=callgrind --callgrind-out-file=/dev/null ' . escapeshellarg(PHP_BINARY)
        . " -d opcache.enable_cli=1 $opcache -d opcache.file_update_protection=0 "
        . implode(' ', array_map(escapeshellarg(...), [__FILE__, '--run', $script, $path, (string) $calls])) . ' 2>&1';
    exec($command, $lines, $status);
    $output = implode("\n", $lines);
    if ($status !== 0 || preg_match('/^==\d+== I\s+refs:\s+([\d,]+)/m', $output, $refs) !== 1) {
        fwrite(STDERR, "$command failed (exit $status):\n$output\n");
        exit(1);
    }
    return (int) str_replace(',', '', $refs[1]);
};

foreach ($apps as $app) {
    [$name, $path] = explode(':', $app, 2) + [1 => '/hello'];
    $script = match ($name) {
        'app' => $root . '/examples/hello/app.php',
        'bare' => $root . '/bench/apps/bare.php',
        default => is_file($name) ? $name : throw new ValueError("Unknown app '$name' (app, bare, or a path)"),
    };
    $perCall = ($count($script, $path, 2 * $n) - $count($script, $path, $n)) / $n;
    printf("%-40s %8.0f instructions/handle()%s (N = %d)\n", $app, $perCall, $jit ? ' JIT' : '', $n);
}
