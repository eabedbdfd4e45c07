<?php

declare(strict_types=1);

namespace Kiln\Store;

/**
 * The node's shared state, as every worker finds it: APCu when the CLI has it on, otherwise a
 * MemoryTable file in /dev/shm. bench/micro/store.php, one 2-core machine: APCu 0.34–1.0 M updates/s
 * in one process, the file 70–140 k (its lock, bucket read and slot write are syscalls): 4–7× apart.
 *
 * A worker addresses the node by its supervisor: workers are forked straight from it, so
 * posix_getppid() is the supervisor's pid in every worker of every generation, and no two live nodes
 * share it (the process group would not do: kiln started from a script or a test runner shares the
 * caller's group). The file name also carries the supervisor's start time, so a reused pid never
 * inherits a dead node's table. KILN_NODE_ID, when set, names the node instead.
 *
 * Clean-up: the Server layer does not know about stores, so nothing removes the file when the supervisor
 * exits; the next node's workers remove every file whose supervisor is gone (sweep()). The command that
 * ran the supervisor MAY remove it at once: `NodeState::remove(NodeState::nodeId(getmypid()))` after
 * Supervisor::run() returns. A process forked below a worker has another parent: it needs KILN_NODE_ID
 * (or the worker's store object, inherited through fork).
 *
 * Like the loop accessor, this is per-process state: set() replaces the store (a Redis one, a test
 * double) for everything that asks later.
 */
final class NodeState
{
    private static ?SharedState $state = null;

    private static ?Store $store = null;

    private static ?Store $local = null;

    private static ?NearCache $near = null;

    private static ?SharedState $events = null;

    public static function get(): SharedState
    {
        return self::$state ??= self::create();
    }

    public static function set(?SharedState $state): void
    {
        self::$state = $state;
    }

    /** The node's Store (Counter, Cache, sessions): APCu when the CLI has it on, else a table in /dev/shm. */
    public static function store(): Store
    {
        return self::$store ??= self::localStore();
    }

    /** $store replaces the node's Store; $near, when given, is the first level of caches over it (NearCache). */
    public static function setStore(?Store $store, ?NearCache $near = null): void
    {
        self::$store = $store;
        self::$near = $near;
    }

    /** The node's own memory, whatever store() is: APCu when the CLI has it on, else a table in /dev/shm. */
    public static function localStore(): Store
    {
        return self::$local ??= self::createStore();
    }

    /**
     * Where the SSE event ids and their replay buffer live: the node's shared state (get()), unless set to state
     * shared by the nodes (`--redis`), where a client reconnecting to another node finds what it missed.
     */
    public static function eventState(): SharedState
    {
        return self::$events ?? self::get();
    }

    public static function setEventState(?SharedState $state): void
    {
        self::$events = $state;
    }

    /** The first level of the node's caches when its Store is remote, else null. */
    public static function nearCache(): ?NearCache
    {
        return self::$near;
    }

    /**
     * "<supervisor pid>-<its start time>", or KILN_NODE_ID when set (letters, digits, . _ - only).
     *
     * @param ?int $supervisorPid default: this process's parent (right in a worker)
     */
    public static function nodeId(?int $supervisorPid = null): string
    {
        $id = getenv('KILN_NODE_ID');
        if (\is_string($id) && $id !== '') {
            if (preg_match('/^[A-Za-z0-9._-]{1,64}$/D', $id) !== 1) {
                throw new \ValueError('KILN_NODE_ID may hold letters, digits, ".", "_" and "-" only (1 to 64)');
            }
            return $id;
        }
        $pid = $supervisorPid ?? posix_getppid();
        return $pid . '-' . self::startTime($pid);
    }

    /**
     * Where the node's tables live: /dev/shm when there is one (memory), else the temp directory.
     *
     * @param 'state'|'store' $kind the SharedState table, or the Store's
     */
    public static function path(?string $nodeId = null, string $kind = 'state'): string
    {
        $dir = is_dir('/dev/shm') && is_writable('/dev/shm') ? '/dev/shm' : sys_get_temp_dir();
        return \sprintf('%s/kiln-%d-node-%s.%s', $dir, posix_geteuid(), $nodeId ?? self::nodeId(), $kind);
    }

    /** Removes the tables of a node whose processes have all stopped. */
    public static function remove(string $nodeId): void
    {
        @unlink(self::path($nodeId));
        @unlink(self::path($nodeId, 'store'));
    }

    /** Removes this user's tables whose supervisor is gone (pid dead, or alive with another start time). */
    public static function sweep(): int
    {
        $removed = 0;
        foreach (glob(\dirname(self::path('x')) . '/kiln-' . posix_geteuid() . '-node-*.st*') ?: [] as $file) {
            if (preg_match('/-node-(\d+)-(\d+)\.(?:state|store)$/D', $file, $m) === 1 && self::startTime((int) $m[1]) !== $m[2]) {
                $removed += (int) @unlink($file);
            }
        }
        return $removed;
    }

    private static function create(): SharedState
    {
        if (ApcuState::available()) {
            return new ApcuState();
        }
        self::sweep();
        return MemoryTable::file(self::path());
    }

    /**
     * 4,096 buckets × 8 slots × 1 KiB: 32 MiB of sparse file for 32,768 keys of up to ~1,000 serialized
     * bytes (sessions, cache entries), beside the rate limiter's table of small slots.
     */
    private static function createStore(): Store
    {
        if (ApcuState::available()) {
            return new ApcuStore();
        }
        self::sweep();
        return new TableStore(MemoryTable::file(self::path(null, 'store'), 4096, 8, 1024));
    }

    /** Clock ticks since boot when $pid started (Linux /proc), "0" elsewhere, "" when $pid is gone. */
    private static function startTime(int $pid): string
    {
        if (!is_dir('/proc/self')) {
            return $pid > 0 && posix_kill($pid, 0) ? '0' : '';
        }
        $stat = @file_get_contents("/proc/$pid/stat");
        if ($stat === false) {
            return '';
        }
        // Fields after the ")" that closes the command name; starttime is the 22nd field overall.
        $fields = explode(' ', substr($stat, (int) strrpos($stat, ')') + 2));
        return $fields[19] ?? '';
    }
}
