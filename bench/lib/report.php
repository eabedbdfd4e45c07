<?php

declare(strict_types=1);

/*
 * Kiln benchmark reduction and report.
 *
 * bench/run (bash) drives the servers and wrk and leaves raw data in a directory; this script turns
 * that data into the printed table and the dated section appended to bench/RESULTS.md.
 *
 *   php bench/lib/report.php --data=DIR [--results=FILE] [--mode=throughput|idle]
 *        [--baselines=nginx-fpm,nginx-return] [--title=TEXT] [--command=TEXT]
 *   php bench/lib/report.php --selftest
 *
 * Data directory layout (written by bench/run):
 *   runs.tsv         stack <TAB> connections <TAB> rep <TAB> wrk output file <TAB> peak RSS KiB <TAB> wrk exit code
 *                    [<TAB> PSS KiB sampled half-way through [<TAB> CPU ms of the stack's process tree during the run
 *                    [<TAB> CPU ms of its php-cgi / php-fpm processes (empty: none) [<TAB> CPU ms of the load generator (wrk)]]]]
 *   unavailable.tsv  stack <TAB> reason
 *   meta.tsv         key <TAB> value            (software versions, settings; shown in the report)
 *   idle.tsv         key <TAB> value            (idle mode only)
 *
 * Every function below is pure (string/array in, string/array out) so --selftest can check it.
 */

/** wrk prints durations as 617.00us, 1.23ms, 2.00s, 1.50m: returns milliseconds. */
function bench_duration_ms(string $s): ?float
{
    if (!preg_match('/^\s*([0-9]+(?:\.[0-9]+)?)\s*(us|ms|s|m|h)\s*$/', $s, $m)) {
        return null;
    }
    $v = (float) $m[1];

    return match ($m[2]) {
        'us' => $v / 1000,
        'ms' => $v,
        's' => $v * 1000,
        'm' => $v * 60_000,
        'h' => $v * 3_600_000,
    };
}

/**
 * Parses the output of `wrk --latency`.
 *
 * @return array{rps: ?float, p50_ms: ?float, p75_ms: ?float, p90_ms: ?float, p99_ms: ?float, requests: ?int,
 *               non2xx: int, connect: int, read: int, write: int, timeout: int}
 */
function bench_parse_wrk(string $out): array
{
    $r = [
        'rps' => null, 'p50_ms' => null, 'p75_ms' => null, 'p90_ms' => null, 'p99_ms' => null,
        'requests' => null, 'non2xx' => 0, 'connect' => 0, 'read' => 0, 'write' => 0, 'timeout' => 0,
    ];
    if (preg_match('/^Requests\/sec:\s*([0-9.]+)/m', $out, $m)) {
        $r['rps'] = (float) $m[1];
    }
    if (preg_match('/^\s*([0-9]+) requests in /m', $out, $m)) {
        $r['requests'] = (int) $m[1];
    }
    // The "Latency Distribution" block: "     50%  617.00us". Only look after its heading so the
    // "Thread Stats" lines (which also contain "%") are not mistaken for percentiles.
    $pos = strpos($out, 'Latency Distribution');
    if ($pos !== false) {
        $block = substr($out, $pos);
        foreach (['50' => 'p50_ms', '75' => 'p75_ms', '90' => 'p90_ms', '99' => 'p99_ms'] as $pct => $key) {
            if (preg_match('/^\s*' . $pct . '%\s+(\S+)/m', $block, $m)) {
                $r[$key] = bench_duration_ms($m[1]);
            }
        }
    }
    if (preg_match('/Non-2xx or 3xx responses:\s*([0-9]+)/', $out, $m)) {
        $r['non2xx'] = (int) $m[1];
    }
    if (preg_match('/Socket errors:\s*connect\s+([0-9]+),\s*read\s+([0-9]+),\s*write\s+([0-9]+),\s*timeout\s+([0-9]+)/', $out, $m)) {
        [$r['connect'], $r['read'], $r['write'], $r['timeout']] = [(int) $m[1], (int) $m[2], (int) $m[3], (int) $m[4]];
    }

    return $r;
}

/** @param list<float|int> $xs */
function bench_median(array $xs): ?float
{
    $xs = array_values(array_filter($xs, static fn($x) => $x !== null));
    $n = count($xs);
    if ($n === 0) {
        return null;
    }
    sort($xs);
    $mid = intdiv($n, 2);

    return $n % 2 ? (float) $xs[$mid] : ($xs[$mid - 1] + $xs[$mid]) / 2;
}

/**
 * Reads a TSV file into rows of fields (missing file: no rows).
 *
 * @return list<list<string>>
 */
function bench_read_tsv(string $file): array
{
    if (!is_file($file)) {
        return [];
    }
    $rows = [];
    foreach (file($file, FILE_IGNORE_NEW_LINES | FILE_SKIP_EMPTY_LINES) ?: [] as $line) {
        $rows[] = explode("\t", $line);
    }

    return $rows;
}

/**
 * One measurement per element: stack, conns, rep, rss_kib, exit, plus the parsed wrk fields.
 * Groups them per (stack, connections) and takes medians over the repetitions.
 *
 * @param list<array<string, mixed>> $runs
 *
 * @return list<array<string, mixed>> in first-seen stack order, then by connections
 */
function bench_reduce(array $runs): array
{
    $groups = [];
    $stackOrder = [];
    foreach ($runs as $run) {
        $stackOrder[$run['stack']] ??= count($stackOrder);
        $groups[$run['stack'] . "\0" . $run['conns']][] = $run;
    }
    $out = [];
    foreach ($groups as $g) {
        $rps = array_map(static fn($r) => $r['rps'], $g);
        $valid = array_values(array_filter($rps, static fn($x) => $x !== null));
        $out[] = [
            'stack' => $g[0]['stack'],
            'conns' => (int) $g[0]['conns'],
            'reps' => count($g),
            'rps' => bench_median($rps),
            'rps_min' => $valid ? min($valid) : null,
            'rps_max' => $valid ? max($valid) : null,
            'p50_ms' => bench_median(array_map(static fn($r) => $r['p50_ms'], $g)),
            'p99_ms' => bench_median(array_map(static fn($r) => $r['p99_ms'], $g)),
            'rss_mib' => bench_median(array_map(static fn($r) => $r['rss_kib'] === null ? null : $r['rss_kib'] / 1024, $g)),
            'pss_mib' => bench_median(array_map(static fn($r) => ($r['pss_kib'] ?? null) === null ? null : $r['pss_kib'] / 1024, $g)),
            'cpu_us' => bench_median(array_map(static fn($r) => bench_cpu_per_request_us($r['cpu_ms'] ?? null, $r['requests']), $g)),
            'php_cpu_us' => bench_median(array_map(static fn($r) => bench_cpu_per_request_us($r['php_cpu_ms'] ?? null, $r['requests']), $g)),
            'client_cpu_us' => bench_median(array_map(static fn($r) => bench_cpu_per_request_us($r['client_cpu_ms'] ?? null, $r['requests']), $g)),
            'non2xx' => array_sum(array_map(static fn($r) => $r['non2xx'], $g)),
            'sockerr' => array_sum(array_map(static fn($r) => $r['connect'] + $r['read'] + $r['write'] + $r['timeout'], $g)),
            'sockerr_detail' => implode(' ', array_map(
                static fn($r) => sprintf('c%d/r%d/w%d/t%d', $r['connect'], $r['read'], $r['write'], $r['timeout']),
                $g,
            )),
            'failed_reps' => count(array_filter($g, static fn($r) => $r['rps'] === null || (int) $r['exit'] !== 0)),
        ];
    }
    usort($out, static fn($a, $b) => [$stackOrder[$a['stack']], $a['conns']] <=> [$stackOrder[$b['stack']], $b['conns']]);

    return $out;
}

/**
 * Adds ratio columns: this stack's median req/s over the baseline's at the same connection count.
 *
 * @param list<array<string, mixed>> $rows
 * @param list<string>               $baselines
 *
 * @return list<array<string, mixed>>
 */
function bench_ratios(array $rows, array $baselines): array
{
    $by = [];
    foreach ($rows as $r) {
        $by[$r['stack']][$r['conns']] = $r['rps'];
    }
    foreach ($rows as &$r) {
        foreach ($baselines as $b) {
            $base = $by[$b][$r['conns']] ?? null;
            $r['ratio'][$b] = ($base && $r['rps'] !== null) ? $r['rps'] / $base : null;
        }
    }

    return $rows;
}

/** Server CPU (user + system, ms, whole process tree) per completed request, in µs; null when either is unknown. */
function bench_cpu_per_request_us(?float $cpuMs, ?int $requests): ?float
{
    return ($cpuMs === null || $requests === null || $requests === 0) ? null : $cpuMs * 1000 / $requests;
}

/** Display width without needing mbstring (counts UTF-8 code points). */
function bench_strlen(string $s): int
{
    return (int) preg_match_all('/./su', $s);
}

function bench_fmt(?float $v, int $dec, string $suffix = ''): string
{
    return $v === null ? '—' : number_format($v, $dec, '.', '') . $suffix;
}

/**
 * @param list<array<string, mixed>> $rows (after bench_ratios)
 * @param list<string>               $baselines
 *
 * @return array{0: list<string>, 1: list<list<string>>}
 */
function bench_table_cells(array $rows, array $baselines): array
{
    $head = ['stack', 'conns', 'req/s (median)', 'min–max', 'p50 ms', 'p99 ms', 'RSS MiB', 'PSS MiB', 'CPU µs/req', 'of which PHP processes', 'wrk CPU µs/req', 'errors'];
    foreach ($baselines as $b) {
        $head[] = '× ' . $b;
    }
    $cells = [];
    foreach ($rows as $r) {
        $err = [];
        if ($r['non2xx']) {
            $err[] = $r['non2xx'] . ' non-2xx';
        }
        if ($r['sockerr']) {
            $err[] = $r['sockerr'] . ' sock (' . $r['sockerr_detail'] . ')';
        }
        if ($r['failed_reps']) {
            $err[] = $r['failed_reps'] . '/' . $r['reps'] . ' reps failed';
        }
        $line = [
            $r['stack'],
            (string) $r['conns'],
            bench_fmt($r['rps'], 0),
            $r['rps_min'] === null ? '—' : bench_fmt($r['rps_min'], 0) . '–' . bench_fmt($r['rps_max'], 0),
            bench_fmt($r['p50_ms'], 2),
            bench_fmt($r['p99_ms'], 2),
            bench_fmt($r['rss_mib'], 1),
            bench_fmt($r['pss_mib'], 1),
            bench_fmt($r['cpu_us'] ?? null, 0),
            bench_fmt($r['php_cpu_us'] ?? null, 0),
            bench_fmt($r['client_cpu_us'] ?? null, 1),
            $err ? implode(', ', $err) : '0',
        ];
        foreach ($baselines as $b) {
            $line[] = bench_fmt($r['ratio'][$b] ?? null, 2);
        }
        $cells[] = $line;
    }

    return [$head, $cells];
}

/** @param list<string> $head @param list<list<string>> $cells */
function bench_render_text(array $head, array $cells): string
{
    $w = array_map(static fn($h) => bench_strlen($h), $head);
    foreach ($cells as $row) {
        foreach ($row as $i => $c) {
            $w[$i] = max($w[$i], bench_strlen($c));
        }
    }
    $pad = static function (array $row) use ($w): string {
        $s = [];
        foreach ($row as $i => $c) {
            $s[] = $i < 1 ? $c . str_repeat(' ', $w[$i] - bench_strlen($c)) : str_repeat(' ', $w[$i] - bench_strlen($c)) . $c;
        }

        return rtrim(implode('  ', $s));
    };
    $out = $pad($head) . "\n" . implode('  ', array_map(static fn($n) => str_repeat('-', $n), $w)) . "\n";
    foreach ($cells as $row) {
        $out .= $pad($row) . "\n";
    }

    return $out;
}

/** @param list<string> $head @param list<list<string>> $cells */
function bench_render_markdown(array $head, array $cells): string
{
    $esc = static fn($c) => str_replace('|', '\\|', $c);
    $out = '| ' . implode(' | ', array_map($esc, $head)) . " |\n";
    $out .= '|' . implode('|', array_map(static fn($i) => $i === 0 ? '---' : '---:', array_keys($head))) . "|\n";
    foreach ($cells as $row) {
        $out .= '| ' . implode(' | ', array_map($esc, $row)) . " |\n";
    }

    return $out;
}

/** @return array<string, string> */
function bench_machine(): array
{
    $cpu = 'unknown';
    $info = @file_get_contents('/proc/cpuinfo') ?: '';
    if (preg_match('/^model name\s*:\s*(.+)$/m', $info, $m)) {
        $cpu = trim($m[1]);
    }
    $nproc = trim((string) @shell_exec('nproc 2>/dev/null')) ?: (string) substr_count($info, "\nprocessor");

    return [
        'date' => gmdate('Y-m-d H:i:s') . ' UTC',
        'kernel (uname -r)' => php_uname('r'),
        'nproc' => $nproc,
        'CPU' => $cpu,
        'PHP (cli)' => PHP_VERSION,
    ];
}

/** @param array<string, string> $kv */
function bench_kv_markdown(array $kv): string
{
    $out = '';
    foreach ($kv as $k => $v) {
        $out .= '- ' . $k . ': ' . ($v === '' ? '—' : (str_contains($v, '`') ? $v : '`' . $v . '`')) . "\n";
    }

    return $out;
}

/**
 * Builds the report for a throughput run from a data directory.
 *
 * @return array{text: string, markdown: string}
 */
function bench_report_throughput(string $dir, array $baselines, string $title, string $command): array
{
    $runs = [];
    foreach (bench_read_tsv($dir . '/runs.tsv') as $f) {
        [$stack, $conns, $rep, $file, $rss, $exit, $pss, $cpu, $php, $client] = array_pad($f, 10, '');
        $wrkFile = str_starts_with($file, '/') ? $file : $dir . '/' . $file;
        $parsed = bench_parse_wrk(is_file($wrkFile) ? (string) file_get_contents($wrkFile) : '');
        $runs[] = ['stack' => $stack, 'conns' => (int) $conns, 'rep' => (int) $rep,
            'rss_kib' => $rss === '' ? null : (float) $rss, 'pss_kib' => $pss === '' ? null : (float) $pss,
            'cpu_ms' => $cpu === '' ? null : (float) $cpu, 'php_cpu_ms' => $php === '' ? null : (float) $php,
            'client_cpu_ms' => $client === '' ? null : (float) $client,
            'exit' => $exit === '' ? 1 : (int) $exit] + $parsed;
    }
    $rows = bench_ratios(bench_reduce($runs), $baselines);
    [$head, $cells] = bench_table_cells($rows, $baselines);

    $unavailable = [];
    foreach (bench_read_tsv($dir . '/unavailable.tsv') as $f) {
        $unavailable[$f[0]] = $f[1] ?? 'unknown reason';
    }
    $meta = [];
    foreach (bench_read_tsv($dir . '/meta.tsv') as $f) {
        $meta[$f[0]] = $f[1] ?? '';
    }

    $text = bench_render_text($head, $cells);
    foreach ($unavailable as $s => $why) {
        $text .= sprintf("%s: unavailable: %s\n", $s, $why);
    }
    $text .= "req/s, p50, p99, RSS and PSS are medians over the repetitions;\n"
        . "RSS: peak of the summed RSS of the stack's process tree during the run (counts shared pages once per process);\n"
        . "PSS: summed proportional set size half-way through the run (shared pages split between sharers);\n"
        . "CPU µs/req: user + system CPU of the stack's process tree (children it reaped included) during the run / requests completed;\n"
        . "wrk CPU µs/req: the same for the load generator; the machine's cores are shared by both, so req/s is bounded by\n"
        . "  cores / (CPU µs/req + wrk CPU µs/req) at most, whatever the stack;\n"
        . '× columns: this median req/s / the named stack\'s median req/s at the same connection count.' . "\n";

    $md = '## ' . $title . "\n\n";
    $md .= bench_kv_markdown(bench_machine() + ['command' => '`' . $command . '`'] + $meta) . "\n";
    $md .= $rows ? bench_render_markdown($head, $cells) : "_no measurement_\n";
    foreach ($unavailable as $s => $why) {
        $md .= "\n- `{$s}`: unavailable: {$why}";
    }
    $md .= ($unavailable ? "\n" : '') . "\n";

    return ['text' => $text, 'markdown' => $md];
}

/**
 * Idle-connection report. idle.tsv keys: n, ok, failed, still_open, rss_before_kib, rss_after_kib, …
 *
 * @return array{text: string, markdown: string}
 */
function bench_report_idle(string $dir, string $title, string $command): array
{
    $kv = [];
    foreach (bench_read_tsv($dir . '/idle.tsv') as $f) {
        $kv[$f[0]] = $f[1] ?? '';
    }
    $meta = [];
    foreach (bench_read_tsv($dir . '/meta.tsv') as $f) {
        $meta[$f[0]] = $f[1] ?? '';
    }
    $n = (int) ($kv['n'] ?? 0);
    $before = isset($kv['rss_before_kib']) && $kv['rss_before_kib'] !== '' ? (float) $kv['rss_before_kib'] : null;
    $after = isset($kv['rss_after_kib']) && $kv['rss_after_kib'] !== '' ? (float) $kv['rss_after_kib'] : null;
    $num = static fn(string $k): ?float => isset($kv[$k]) && is_numeric($kv[$k]) ? (float) $kv[$k] : null;
    $pssBefore = $num('pss_before_kib');
    $pssAfter = $num('pss_after_kib');
    $perConn = ($before !== null && $after !== null && $n > 0) ? ($after - $before) / $n : null;
    $pssPerConn = ($pssBefore !== null && $pssAfter !== null && $n > 0) ? ($pssAfter - $pssBefore) / $n : null;
    $head = ['connections', 'responded 200', 'failed', 'still open', 'seconds to open', 'RSS before MiB', 'RSS after MiB',
        'RSS KiB / conn', 'PSS before MiB', 'PSS after MiB', 'PSS KiB / conn'];
    $mib = static fn(?float $k) => bench_fmt($k === null ? null : $k / 1024, 1);
    $cells = [[
        (string) $n, (string) ($kv['ok'] ?? '—'), (string) ($kv['failed'] ?? '—'), (string) (($kv['still_open'] ?? '') !== '' ? $kv['still_open'] : '—'),
        (string) (($kv['seconds_to_establish'] ?? '') !== '' ? $kv['seconds_to_establish'] : '—'),
        $mib($before), $mib($after), bench_fmt($perConn, 2), $mib($pssBefore), $mib($pssAfter), bench_fmt($pssPerConn, 2),
    ]];
    $text = bench_render_text($head, $cells);
    if (($kv['error'] ?? '') !== '') {
        $text .= 'error: ' . $kv['error'] . "\n";
    }
    $md = '## ' . $title . "\n\n" . bench_kv_markdown(bench_machine() + ['command' => '`' . $command . '`'] + $meta) . "\n"
        . bench_render_markdown($head, $cells) . (($kv['error'] ?? '') !== '' ? "\nerror: " . $kv['error'] . "\n" : '') . "\n";

    return ['text' => $text, 'markdown' => $md];
}

function bench_selftest(): int
{
    $pass = 0;
    $fail = 0;
    $eq = static function (string $name, mixed $want, mixed $got) use (&$pass, &$fail): void {
        $ok = is_float($want) && is_float($got) ? abs($want - $got) < 1e-9 : $want === $got;
        if ($ok) {
            ++$pass;
        } else {
            ++$fail;
            fwrite(STDERR, "FAIL {$name}: want " . var_export($want, true) . ', got ' . var_export($got, true) . "\n");
        }
    };
    $wrk = <<<'WRK'
        Running 10s test @ http://127.0.0.1:8080/hello
          2 threads and 64 connections
          Thread Stats   Avg      Stdev     Max   +/- Stdev
            Latency   617.00us    1.20ms  50.00ms   95.00%
            Req/Sec    50.00k     3.00k   60.00k    70.00%
          Latency Distribution
             50%  512.00us
             75%  700.00us
             90%    1.10ms
             99%    2.50s
          1000000 requests in 10.00s, 120.00MB read
          Socket errors: connect 1, read 2, write 3, timeout 4
          Non-2xx or 3xx responses: 17
        Requests/sec: 100000.50
        Transfer/sec:     12.00MB
        WRK;
    $p = bench_parse_wrk($wrk);
    $eq('rps', 100000.5, $p['rps']);
    $eq('p50', 0.512, $p['p50_ms']);
    $eq('p90', 1.1, $p['p90_ms']);
    $eq('p99', 2500.0, $p['p99_ms']);
    $eq('requests', 1000000, $p['requests']);
    $eq('non2xx', 17, $p['non2xx']);
    $eq('sock', [1, 2, 3, 4], [$p['connect'], $p['read'], $p['write'], $p['timeout']]);
    $empty = bench_parse_wrk('unable to connect to 127.0.0.1:1 Connection refused');
    $eq('failed run has no rps', null, $empty['rps']);
    $eq('minutes', 90000.0, bench_duration_ms('1.50m'));
    $eq('garbage', null, bench_duration_ms('n/a'));
    $eq('median odd', 2.0, bench_median([3, 1, 2]));
    $eq('median even', 2.5, bench_median([4, 1, 2, 3]));
    $eq('median nulls', 5.0, bench_median([null, 5, null]));
    $eq('median empty', null, bench_median([]));

    $mk = static fn(string $s, int $c, int $rep, ?float $rps, float $p50 = 1.0) => [
        'stack' => $s, 'conns' => $c, 'rep' => $rep, 'rss_kib' => 2048.0, 'pss_kib' => 1024.0, 'cpu_ms' => 500.0,
        'php_cpu_ms' => $s === 'nginx-fpm' ? 300.0 : null, 'client_cpu_ms' => $s === 'kiln' ? 1234.0 : null, 'exit' => $rps === null ? 1 : 0,
        'rps' => $rps, 'p50_ms' => $p50, 'p99_ms' => $p50 * 4, 'requests' => 10_000, 'non2xx' => 0,
        'connect' => 0, 'read' => 0, 'write' => 0, 'timeout' => $rps === null ? 0 : 1,
    ];
    $runs = [
        $mk('kiln', 64, 1, 100.0), $mk('nginx-fpm', 64, 1, 50.0), $mk('kiln', 64, 2, 300.0),
        $mk('nginx-fpm', 64, 2, 40.0), $mk('kiln', 64, 3, 200.0), $mk('nginx-fpm', 64, 3, 60.0),
        $mk('kiln', 256, 1, 10.0), $mk('kiln', 256, 2, null),
    ];
    $rows = bench_ratios(bench_reduce($runs), ['nginx-fpm', 'nginx-return']);
    $eq('rows', 3, count($rows));
    $eq('order', ['kiln/64', 'kiln/256', 'nginx-fpm/64'], array_map(static fn($r) => $r['stack'] . '/' . $r['conns'], $rows));
    $eq('median rps', 200.0, $rows[0]['rps']);
    $eq('ratio', 4.0, $rows[0]['ratio']['nginx-fpm']);
    $eq('ratio missing baseline', null, $rows[0]['ratio']['nginx-return']);
    $eq('rss MiB', 2.0, $rows[0]['rss_mib']);
    $eq('failed rep counted', 1, $rows[1]['failed_reps']);
    $eq('median over the successful reps', 10.0, $rows[1]['rps']);
    $eq('sock errors summed', 3, $rows[0]['sockerr']);
    [$head, $cells] = bench_table_cells($rows, ['nginx-fpm']);
    $eq('ratio cell', '4.00', $cells[0][12]);
    $eq('self ratio', '1.00', $cells[2][12]);
    $eq('client cpu cell', '123.4', $cells[0][10]);
    $eq('client cpu cell unknown', '—', $cells[2][10]);
    $eq('cpu cell', '50', $cells[0][8]);
    $eq('php cpu cell', '30', $cells[2][9]);
    $eq('php cpu cell of a stack without PHP processes', '—', $cells[0][9]);
    $eq('cpu unknown', null, bench_cpu_per_request_us(null, 5));
    $eq('pss cell', '1.0', $cells[0][7]);
    $md = bench_render_markdown($head, $cells);
    $eq('markdown rows', 5, substr_count($md, "\n"));
    $txt = bench_render_text($head, $cells);
    $eq('text rows', 5, substr_count($txt, "\n"));

    // end to end through a data directory
    $dir = sys_get_temp_dir() . '/bench-selftest-' . getmypid();
    @mkdir($dir);
    file_put_contents($dir . '/w1.txt', $wrk);
    file_put_contents($dir . '/runs.tsv', "nginx-return\t64\t1\tw1.txt\t4096\t0\n");
    file_put_contents($dir . '/unavailable.tsv', "apache-modphp\tapache2 did not start\n");
    file_put_contents($dir . '/meta.tsv', "wrk\t4.1.0\n");
    $r = bench_report_throughput($dir, ['nginx-return'], 'test', 'bench/run');
    $eq('e2e text has rps', true, str_contains($r['text'], '100001'));
    $eq('e2e text has unavailable', true, str_contains($r['text'], 'apache-modphp: unavailable: apache2 did not start'));
    $eq('e2e md has meta', true, str_contains($r['markdown'], '- wrk: `4.1.0`'));
    file_put_contents($dir . '/idle.tsv', "n\t1000\nok\t1000\nfailed\t0\nstill_open\t1000\nrss_before_kib\t10240\nrss_after_kib\t20480\n");
    $i = bench_report_idle($dir, 'idle', 'bench/run idle 1000');
    $eq('idle KiB/conn', true, str_contains($i['text'], '10.24'));
    array_map('unlink', glob($dir . '/*') ?: []);
    rmdir($dir);

    echo "{$pass} passed, {$fail} failed\n";

    return $fail ? 1 : 0;
}

function bench_main(array $argv): int
{
    $opt = ['mode' => 'throughput', 'baselines' => 'nginx-fpm,nginx-return', 'title' => 'run', 'command' => 'bench/run'];
    foreach (array_slice($argv, 1) as $a) {
        if ($a === '--selftest') {
            return bench_selftest();
        }
        if (preg_match('/^--([a-z]+)=(.*)$/s', $a, $m)) {
            $opt[$m[1]] = $m[2];
        } else {
            fwrite(STDERR, "report.php: unknown argument {$a}\n");

            return 2;
        }
    }
    if (!isset($opt['data']) || !is_dir($opt['data'])) {
        fwrite(STDERR, "usage: php report.php --data=DIR [--results=FILE] [--mode=throughput|idle] [--baselines=a,b] [--title=T] [--command=C] | --selftest\n");

        return 2;
    }
    $title = gmdate('Y-m-d H:i') . ' UTC — ' . $opt['title'];
    $r = $opt['mode'] === 'idle'
        ? bench_report_idle($opt['data'], $title, $opt['command'])
        : bench_report_throughput($opt['data'], array_values(array_filter(explode(',', $opt['baselines']))), $title, $opt['command']);
    echo $r['text'];
    if (($opt['results'] ?? '') !== '') {
        file_put_contents($opt['results'], "\n" . $r['markdown'], FILE_APPEND | LOCK_EX);
        fwrite(STDOUT, "appended to {$opt['results']}\n");
    }

    return 0;
}

if (PHP_SAPI === 'cli' && isset($argv[0]) && realpath($argv[0]) === __FILE__) {
    exit(bench_main($argv));
}
