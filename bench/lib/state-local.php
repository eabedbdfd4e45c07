<?php

declare(strict_types=1);

/*
 * `bench/run state`, node-local part: operations/s of Kiln's Store against raw APCu calls, in one process,
 * interleaved, in the same run. `php [settings] bench/lib/state-local.php SECONDS REPS` prints a Markdown table
 * and a PASS/FAIL line for the bar (Store on APCu ≥ 0.5× raw APCu for get, set and increment). The
 * /dev/shm table (the store where APCu is off) is measured too, for scale; it has no bar.
 */

use Kiln\Store\ApcuState;
use Kiln\Store\ApcuStore;
use Kiln\Store\MemoryTable;
use Kiln\Store\Store;
use Kiln\Store\TableStore;

require __DIR__ . '/../../vendor/autoload.php';

$seconds = (float) ($argv[1] ?? 2);
$reps = max(1, (int) ($argv[2] ?? 3));
if (!ApcuState::available()) {
    fwrite(STDERR, "APCu is not on: run with -d apc.enable_cli=1 (and ext-apcu installed)\n");
    exit(1);
}

const KEYS = 1024;

/** Runs $op(i) for about $seconds in batches; returns operations per second. */
function rate(float $seconds, Closure $op): float
{
    $done = 0;
    $start = hrtime(true);
    $deadline = $start + (int) ($seconds * 1e9);
    do {
        for ($i = 0; $i < 10_000; $i++) {
            $op($done + $i);
        }
        $done += 10_000;
        $now = hrtime(true);
    } while ($now < $deadline);
    return $done / (($now - $start) / 1e9);
}

/** @return array<string, Closure(int): mixed> */
function storeOps(Store $store): array
{
    return [
        'get' => static fn(int $i): mixed => $store->get('k' . ($i & (KEYS - 1))),
        'set' => static fn(int $i): mixed => $store->set('k' . ($i & (KEYS - 1)), 'value-' . $i, 60),
        'increment' => static fn(int $i): int => $store->increment('n' . ($i & (KEYS - 1))),
        'compareAndSet' => static fn(int $i): bool => $store->compareAndSet('c', $i - 1, $i),
    ];
}

$raw = [
    'get' => static fn(int $i): mixed => apcu_fetch('raw:k' . ($i & (KEYS - 1))),
    'set' => static fn(int $i): bool => apcu_store('raw:k' . ($i & (KEYS - 1)), 'value-' . $i, 60),
    'increment' => static fn(int $i): int|false => apcu_inc('raw:n' . ($i & (KEYS - 1))),
    'compareAndSet' => static fn(int $i): bool => apcu_cas('raw:c', $i - 1, $i),
];
$table = (string) tempnam(sys_get_temp_dir(), 'kiln-bench-table-');
@unlink($table);
$stacks = [
    'raw APCu' => $raw,
    'Store (APCu)' => storeOps(new ApcuStore('bench:')),
    'Store (/dev/shm table)' => storeOps(new TableStore(MemoryTable::file($table, 4096, 8, 1024))),
];
// Fill the keys once, so get() hits and compareAndSet() finds what it expects.
foreach ($stacks as $ops) {
    for ($i = 0; $i < KEYS; $i++) {
        $ops['set']($i);
    }
}
apcu_store('raw:c', -1);

$runs = [];
for ($rep = 0; $rep < $reps; $rep++) {
    foreach (array_keys($raw) as $op) {
        foreach ($stacks as $name => $ops) {
            if ($op === 'compareAndSet') {
                apcu_delete('raw:c');
                apcu_store('raw:c', -1);
                apcu_delete('bench:c');
                $ops === $raw || (new ApcuStore('bench:'))->set('c', -1);
            }
            $runs[$op][$name][] = rate($name === 'Store (/dev/shm table)' ? $seconds / 2 : $seconds, $ops[$op]);
        }
    }
}
@unlink($table);

$median = static function (array $values): float {
    sort($values);
    return $values[intdiv(count($values) - 1, 2)];
};
echo "| operation | raw APCu ops/s | Store on APCu ops/s | Store / raw | Store on /dev/shm table ops/s |\n|---|---:|---:|---:|---:|\n";
$pass = true;
foreach ($runs as $op => $byStack) {
    [$r, $s, $t] = [$median($byStack['raw APCu']), $median($byStack['Store (APCu)']), $median($byStack['Store (/dev/shm table)'])];
    $ratio = $s / $r;
    if ($op !== 'compareAndSet') {
        $pass = $pass && $ratio >= 0.5;
    }
    printf("| %s | %s | %s | %.2f× | %s |\n", $op, number_format($r), number_format($s), $ratio, number_format($t));
}
printf("\nBar (Store on APCu >= 0.5x raw APCu for get, set and increment): %s.\n", $pass ? 'met' : 'NOT met');
echo "compareAndSet: raw is apcu_cas() (integers only); the Store's takes any value, inside apcu_entry() (no bar).\n";
