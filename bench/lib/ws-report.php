<?php

declare(strict_types=1);

/*
 * The markdown section of `bench/run ws`: machine facts, the echo table (median of the reps, CPU µs per
 * message, ratios against Workerman and node ws), the idle line and the broadcast lines.
 *
 *   php bench/lib/ws-report.php DATA_DIR COMMAND IDLE_LINE [BROADCAST_LINE...]
 * DATA_DIR holds ws-echo.tsv (stack, rep, rate, cpu µs per message, errors) and meta.tsv (name, value).
 */

/** @return array<string, string> key=value pairs of a wsbench line */
function pairs(string $line): array
{
    preg_match_all('/(\w+)=(\S+)/', $line, $m, PREG_SET_ORDER);
    $out = [];
    foreach ($m as [, $k, $v]) {
        $out[$k] = $v;
    }
    return $out;
}

/** @param list<float> $values */
function median(array $values): float
{
    sort($values);
    $n = count($values);
    return $n === 0 ? 0.0 : ($n % 2 ? $values[intdiv($n, 2)] : ($values[$n / 2 - 1] + $values[$n / 2]) / 2);
}

[, $data, $command, $idle] = $argv + [1 => '', 2 => '', 3 => ''];
$broadcasts = array_slice($argv, 4);

$rates = $cpu = $errors = [];
foreach (file("$data/ws-echo.tsv", FILE_IGNORE_NEW_LINES) ?: [] as $line) {
    [$stack, , $rate, $us, $err] = explode("\t", $line) + ['', '', '0', '', '0'];
    $rates[$stack][] = (float) $rate;
    if ($us !== '') {
        $cpu[$stack][] = (float) $us;
    }
    $errors[$stack] = ($errors[$stack] ?? 0) + (int) $err;
}

$date = gmdate('Y-m-d H:i');
$out = "## $date UTC — ws: WebSocket echo, idle connections and room broadcast\n\n";
$out .= '- date: `' . gmdate('Y-m-d H:i:s') . " UTC`\n";
$out .= '- kernel (uname -r): `' . php_uname('r') . "`\n";
$out .= '- nproc: `' . trim((string) shell_exec('nproc')) . "`\n";
$out .= '- CPU: `' . trim((string) shell_exec("awk -F': ' '/model name/ {print \$2; exit}' /proc/cpuinfo")) . "`\n";
$out .= '- PHP (cli): `' . PHP_VERSION . "`\n";
$out .= "- command: `$command`\n";
foreach (file("$data/meta.tsv", FILE_IGNORE_NEW_LINES) ?: [] as $line) {
    [$k, $v] = explode("\t", $line, 2) + [1 => ''];
    $out .= "- $k: `$v`\n";
}

$peer = static fn(string $name): float => median($rates[$name] ?? []);
$out .= "\n### Echo\n\n| stack | messages/s (median) | min–max | CPU µs/message | errors | × workerman-ws | × node-ws |\n|---|---:|---:|---:|---:|---:|---:|\n";
foreach ($rates as $stack => $values) {
    $m = median($values);
    $ratio = static fn(string $p): string => $peer($p) > 0 ? sprintf('%.2f', $m / $peer($p)) : '–';
    $out .= sprintf(
        "| %s | %.0f | %.0f–%.0f | %s | %d | %s | %s |\n",
        $stack,
        $m,
        min($values),
        max($values),
        isset($cpu[$stack]) ? sprintf('%.1f', median($cpu[$stack])) : '–',
        $errors[$stack] ?? 0,
        $ratio('workerman-ws'),
        $ratio('node-ws'),
    );
}

if ($idle !== '' && !str_contains($idle, 'open_at_end=')) {
    $out .= "\n### Idle\n\nThe idle run failed: `" . trim($idle) . "`\n";
} elseif ($idle !== '') {
    $p = pairs($idle);
    $out .= sprintf(
        "\n### Idle\n\nkiln-ws held %s of %s idle WebSocket connections for the whole hold (%s at its start); "
        . "RSS of the process tree %.1f MiB before, %.1f MiB while held: **%s KiB per connection**.\n",
        $p['open_at_end'] ?? '?',
        $p['connections'] ?? '?',
        $p['open_at_start'] ?? '?',
        (float) ($p['rss_before_kib'] ?? 0) / 1024,
        (float) ($p['rss_held_kib'] ?? 0) / 1024,
        $p['kib_per_connection'] ?? '?',
    );
}

if ($broadcasts !== []) {
    $out .= "\n### Broadcast to one room\n\n| stack | members | messages | delivered / expected | lost | p50 ms | p99 ms | max ms |\n|---|---:|---:|---:|---:|---:|---:|---:|\n";
    foreach ($broadcasts as $line) {
        $stack = strtok($line, ' ');
        $p = pairs($line);
        $out .= sprintf(
            "| %s | %s | %s | %s / %s | %s | %s | %s | %s |\n",
            $stack,
            $p['members'] ?? '?',
            $p['messages'] ?? '?',
            $p['received'] ?? '?',
            $p['expected'] ?? '?',
            $p['lost'] ?? '?',
            $p['p50_ms'] ?? '?',
            $p['p99_ms'] ?? '?',
            $p['max_ms'] ?? '?',
        );
    }
    $out .= "\nkiln-ws spreads the members over its 2 workers (the room spans them through the node bus); "
        . "Workerman's room lives in one process (`workerman-ws-1`, 1 worker) and node ws is one process.\n";
}

echo $out;
