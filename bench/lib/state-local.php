<?php

declare(strict_types=1);

/*
 * `bench/run state`, node-local part: operations/s of Kiln's Store against raw APCu calls, in one process,
 * interleaved, in the same run. `php [settings] bench/lib/state-local.php SECONDS REPS` prints a Markdown table
 * and whether the bar is met (Store on APCu >= 0.5x raw APCu for get, set and increment). The /dev/shm table
 * (the store where APCu is off) is measured too, for scale; it has no bar.
 */

use Kiln\Store\ApcuState;
use Kiln\Store\ApcuStore;
use Kiln\Store\MemoryTable;
use Kiln\Store\Store;
use Kiln\Store\TableStore;

require __DIR__ . '/autoload.php';

$seconds = (float) ($argv[1] ?? 2);
$reps = max(1, (int) ($argv[2] ?? 3));
if (!ApcuState::available()) {
    fwrite(STDERR, "APCu is not on: run with -d apc.enable_cli=1 (and ext-apcu installed)\n");
    exit(1);
}

const KEYS = 1024;

/**
 * Runs the stacks' $op in turns of $batch[name] calls (a few milliseconds each), so that a change of load on the
 * machine falls on every stack alike, until each has run about $seconds; returns operations/s by stack.
 *
 * @param array<string, array<string, Closure(int): mixed>> $stacks
 * @param array<string, int> $batch
 * @return array<string, float>
 */
function rates(float $seconds, array $stacks, string $op, array $batch): array
{
    $spent = array_fill_keys(array_keys($stacks), 0);
    $done = array_fill_keys(array_keys($stacks), 0);
    while (min($spent) < $seconds * 1e9) {
        foreach ($stacks as $name => $ops) {
            $call = $ops[$op];
            $from = $done[$name];
            $end = $from + $batch[$name];
            $start = hrtime(true);
            for ($i = $from; $i < $end; $i++) {
                $call($i);
            }
            $spent[$name] += hrtime(true) - $start;
            $done[$name] = $end;
        }
    }
    $rates = [];
    foreach ($done as $name => $count) {
        $rates[$name] = $count / ($spent[$name] / 1e9);
    }
    return $rates;
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
$apcuStore = new ApcuStore('bench:');
$tableStore = new TableStore(MemoryTable::file($table, 4096, 8, 1024));
$stacks = ['raw APCu' => $raw, 'Store (APCu)' => storeOps($apcuStore), 'Store (/dev/shm table)' => storeOps($tableStore)];
$batch = ['raw APCu' => 20_000, 'Store (APCu)' => 20_000, 'Store (/dev/shm table)' => 300];
// Fill the keys once, so get() hits.
foreach ($stacks as $ops) {
    for ($i = 0; $i < KEYS; $i++) {
        $ops['set']($i);
    }
}

$runs = [];
for ($rep = 0; $rep < $reps; $rep++) {
    foreach (array_keys($raw) as $op) {
        if ($op === 'compareAndSet') {
            // Each stack's calls count from 0 again: compareAndSet(i - 1 → i) starts from -1.
            apcu_store('raw:c', -1);
            $apcuStore->set('c', -1);
            $tableStore->set('c', -1);
        }
        foreach (rates($seconds, $stacks, $op, $batch) as $name => $rate) {
            $runs[$op][$name][] = $rate;
        }
    }
}
@unlink($table);

$median = static function (array $values): float {
    sort($values);
    return $values[intdiv(count($values) - 1, 2)];
};
echo "| operation | raw APCu ops/s | Store on APCu ops/s | Store / raw | Store on /dev/shm table ops/s |\n|---|---:|---:|---:|---:|\n";
$met = true;
foreach ($runs as $op => $byStack) {
    [$r, $s, $t] = [$median($byStack['raw APCu']), $median($byStack['Store (APCu)']), $median($byStack['Store (/dev/shm table)'])];
    $ratio = $s / $r;
    if ($op !== 'compareAndSet') {
        $met = $met && $ratio >= 0.5;
    }
    printf("| %s | %s | %s | %.2f× | %s |\n", $op, number_format($r), number_format($s), $ratio, number_format($t));
}
printf("\nBar (Store on APCu >= 0.5x raw APCu for get, set and increment): %s.\n", $met ? 'met' : 'NOT met');
echo "compareAndSet: raw is apcu_cas() (integers only); the Store's takes any value, inside apcu_entry() (no bar).\n";
echo "The stacks take turns every 20,000 calls (300 on the table), so load changes fall on all of them.\n";
