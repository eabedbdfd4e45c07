<?php

declare(strict_types=1);

/*
 * Node-shared state backends: `php bench/micro/store.php` (re-runs itself with apc.enable_cli=1 when
 * ext-apcu is loaded but off). Reports ops/s of update() (an increment) and get(), in one process and in
 * 4 processes at once (one hot key, and 1,000 keys), against a plain PHP array as the ceiling.
 */

use Kiln\Store\ApcuState;
use Kiln\Store\MemoryTable;
use Kiln\Store\SharedState;

require __DIR__ . '/../../src/bootstrap.php';

if (!ApcuState::available() && extension_loaded('apcu') && getenv('KILN_BENCH_REEXEC') === false) {
    putenv('KILN_BENCH_REEXEC=1');
    pcntl_exec(PHP_BINARY, ['-d', 'apc.enable_cli=1', __FILE__, ...array_slice($argv, 1)]);
}

final class ArrayState implements SharedState
{
    /** @var array<string, array<mixed>> */
    private array $values = [];

    public function update(string $key, Closure $fn, int $ttlSeconds): ?array
    {
        $new = $fn($this->values[$key] ?? null);
        if ($new === null) {
            unset($this->values[$key]);
        } else {
            $this->values[$key] = $new;
        }
        return $new;
    }

    public function get(string $key): ?array
    {
        return $this->values[$key] ?? null;
    }

    public function delete(string $key): void
    {
        unset($this->values[$key]);
    }
}

/** @return float ops/s of $n increments spread over $keys keys, in $procs processes at once */
function updates(SharedState $state, int $n, int $procs, int $keys): float
{
    $increment = static fn(?array $c): array => ['t' => (\is_float($c['t'] ?? null) ? $c['t'] : 0.0) + 1.0, 'at' => 1.0];
    $start = hrtime(true);
    $pids = [];
    for ($p = 0; $p < $procs; $p++) {
        $pid = $procs === 1 ? 0 : pcntl_fork();
        if ($pid === 0) {
            for ($i = 0; $i < $n; $i++) {
                $state->update('client:' . ($i % $keys), $increment, 60);
            }
            if ($procs > 1) {
                exit(0);
            }
        }
        $pids[] = $pid;
    }
    foreach ($procs > 1 ? $pids : [] as $pid) {
        pcntl_waitpid($pid, $status);
    }
    return $n * $procs / ((hrtime(true) - $start) / 1e9);
}

function gets(SharedState $state, int $n): float
{
    $start = hrtime(true);
    for ($i = 0; $i < $n; $i++) {
        $state->get('client:' . ($i % 1000));
    }
    return $n / ((hrtime(true) - $start) / 1e9);
}

$dir = is_writable('/dev/shm') ? '/dev/shm' : sys_get_temp_dir();
$backends = ['array (one process, not shared)' => static fn() => new ArrayState()];
if (ApcuState::available()) {
    $backends['ApcuState'] = static fn() => new ApcuState('bench:' . random_int(0, PHP_INT_MAX) . ':');
}
$backends["MemoryTable::file ($dir)"] = static fn() => MemoryTable::file("$dir/kiln-bench-" . getmypid() . '-' . random_int(0, PHP_INT_MAX));

$n = (int) ($argv[1] ?? 100_000);
printf("%-40s %14s %14s %16s %16s\n", 'ops/s', 'update 1 proc', 'get 1 proc', 'update 4p 1 key', 'update 4p 1k keys');
$ceiling = null;
foreach ($backends as $name => $make) {
    $state = $make();
    $row = [updates($state, $n, 1, 1000), gets($state, $n), updates($state, intdiv($n, 4), 4, 1), updates($state, intdiv($n, 4), 4, 1000)];
    $ceiling ??= $row[0];
    vprintf("%-40s %14s %14s %16s %16s", [$name, ...array_map(static fn(float $v): string => number_format($v), $row)]);
    printf("   (update: %.2f× the array)\n", $row[0] / $ceiling);
    if ($state instanceof MemoryTable) {
        $state->remove();
    }
}
