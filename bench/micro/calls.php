<?php

declare(strict_types=1);

/*
 * PHP function calls per request on the hot path, counted by Xdebug's function trace: exact, and the same with
 * or without the JIT, so it can run while the machine is busy. Where instructions.php says how much a request
 * costs, this says how many calls it is made of; each user function call costs some hundred instructions
 * whatever it does (frame, arguments, type checks), the largest share of a request that parses nothing.
 *
 *   php bench/micro/calls.php [app|bare|PATH|workerman[:URL-PATH] ...] [N]   default: bare app workerman, N = 2000
 *   php bench/micro/calls.php app:/json workerman:/json.php
 *
 * Runs bench/micro/hotpath.php (or workerman.php) for N and 2N requests and prints (count(2N) - count(N)) / N
 * for each function called at least once in two requests, then the totals of user and internal calls. Only the
 * server counts: the forked client stops its copy of the trace (bench/micro/lib/client.php).
 *
 * Xdebug is loaded for these runs only, from the extension directory if Debian's php8.2-xdebug is installed,
 * else from that package downloaded into $TMPDIR/kiln-xdebug (apt-get download; nothing is installed).
 */

$n = 2000;
$targets = [];
foreach (array_slice($argv, 1) as $arg) {
    if (ctype_digit($arg)) {
        $n = (int) $arg;
    } else {
        $targets[] = $arg;
    }
}
$targets = $targets === [] ? ['bare', 'app', 'workerman'] : $targets;

$xdebug = xdebugExtension();

/** @return array<string, int> "function|1" (user) or "function|0" (internal) => entries, for $requests requests */
$count = static function (string $target, int $requests) use ($xdebug): array {
    [$app, $path] = explode(':', $target, 2) + [1 => ''];
    $arguments = $app === 'workerman'
        ? [__DIR__ . '/workerman.php', (string) $requests, $path ?: '/hello.php']
        : [__DIR__ . '/hotpath.php', $app, (string) $requests, $path ?: '/hello'];
    $dir = sys_get_temp_dir() . '/kiln-calls-' . getmypid();
    @mkdir($dir);
    $command = escapeshellarg(PHP_BINARY) . ' -d zend_extension=' . escapeshellarg($xdebug)
        . ' -d xdebug.mode=trace -d xdebug.start_with_request=yes -d xdebug.trace_format=1'
        . ' -d xdebug.output_dir=' . escapeshellarg($dir) . ' -d xdebug.trace_output_name=trace'
        . ' ' . implode(' ', array_map(escapeshellarg(...), $arguments)) . ' 2>&1';
    exec($command, $lines, $status);
    $trace = "$dir/trace.xt";
    if ($status !== 0 || !is_file($trace)) {
        fwrite(STDERR, "$command failed (exit $status):\n" . implode("\n", $lines) . "\n");
        exit(1);
    }
    $calls = [];
    $file = fopen($trace, 'r');
    while (($line = fgets($file)) !== false) {
        // level, function number, 0 (entry), time, memory, name, 1 user / 0 internal, ...
        $fields = explode("\t", $line, 8);
        if (($fields[2] ?? '') === '0' && isset($fields[6])) {
            $key = $fields[5] . '|' . $fields[6];
            $calls[$key] = ($calls[$key] ?? 0) + 1;
        }
    }
    fclose($file);
    unlink($trace);
    @rmdir($dir);
    return $calls;
};

foreach ($targets as $target) {
    $once = $count($target, $n);
    $twice = $count($target, 2 * $n);
    $perRequest = [];
    foreach ($twice as $key => $calls) {
        $extra = ($calls - ($once[$key] ?? 0)) / $n;
        if ($extra >= 0.5) {
            $perRequest[$key] = $extra;
        }
    }
    arsort($perRequest);
    $user = $internal = 0.0;
    printf("%s (N = %d), calls per request:\n", $target, $n);
    foreach ($perRequest as $key => $calls) {
        [$name, $kind] = explode('|', $key);
        $kind === '1' ? $user += $calls : $internal += $calls;
        printf("  %6.2f  %s%s\n", $calls, $name, $kind === '1' ? '' : '  (internal)');
    }
    printf("  %6.2f  user function calls, %.2f internal\n\n", $user, $internal);
}

/** The path of xdebug.so for this PHP, found or unpacked; exits with the reason when there is none. */
function xdebugExtension(): string
{
    $installed = ini_get('extension_dir') . '/xdebug.so';
    if (is_file($installed)) {
        return $installed;
    }
    $package = 'php' . PHP_MAJOR_VERSION . '.' . PHP_MINOR_VERSION . '-xdebug';
    $dir = sys_get_temp_dir() . '/kiln-xdebug';
    $found = glob("$dir/usr/lib/php/*/xdebug.so") ?: [];
    if ($found === []) {
        @mkdir($dir, 0700, true);
        exec('cd ' . escapeshellarg($dir) . " && apt-get download -q $package 2>&1 && dpkg -x {$package}_*.deb . 2>&1", $output, $status);
        $found = glob("$dir/usr/lib/php/*/xdebug.so") ?: [];
        if ($status !== 0 || $found === []) {
            fwrite(STDERR, "Xdebug is needed: $package could not be downloaded:\n" . implode("\n", $output) . "\n");
            exit(1);
        }
    }
    return $found[0];
}
