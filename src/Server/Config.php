<?php

declare(strict_types=1);

namespace Kiln\Server;

/**
 * The process model's settings, validated once in create(). Defaults:
 * listen 127.0.0.1:8080, workers = CPU count, maxRequests 0 (never; as php-fpm), maxMemory 256M
 * (0 = unlimited), memoryLimit null (see workerMemoryLimit()), drainTimeout 30 s, stallTimeout 60 s, shared listener,
 * auto driver, 512 connections per worker.
 * pidFile null = `kiln-HOST-PORT.pid` in the system temp dir, keyed by the first listen address
 * (with its real port once bound), so two servers on different ports never share one.
 */
final class Config
{
    public const DEFAULT_LISTEN = '127.0.0.1:8080';

    /** The workers' memory_limit when neither --memory-limit nor PHP sets one and --max-memory is 0. */
    public const DEFAULT_MEMORY_LIMIT = 1 << 30;

    /** Below this a worker could not even start. */
    public const MIN_MEMORY_LIMIT = 16 << 20;

    /** Above the sequential tier's default --time-limit (30 s), whose scripts hold the loop that long by design. */
    public const DEFAULT_STALL_TIMEOUT = 60.0;

    /** @param non-empty-list<ListenAddress> $listen */
    private function __construct(
        public readonly array $listen,
        public readonly int $workers,
        public readonly int $maxRequests,
        public readonly int $maxMemory,
        public readonly float $drainTimeout,
        public readonly ?string $pidFile,
        public readonly bool $daemon,
        public readonly ListenerMode $listenerMode,
        public readonly string $driver,
        public readonly int $connections,
        public readonly ?string $errorLog,
        public readonly ?string $accessLog,
        public readonly LogLevel $logLevel,
        /** --memory-limit in bytes, -1 for none; null: not given (workerMemoryLimit() decides). */
        public readonly ?int $memoryLimit = null,
        /** What decided the driver and the connection cap (ConnectionPlan), for the start-up line; '' when nothing did. */
        public readonly string $connectionsNote = '',
        /** --stall-timeout: seconds a worker's event loop may stand still before it is reported, and twice that before it is ended (docs/design/028); 0: off */
        public readonly float $stallTimeout = self::DEFAULT_STALL_TIMEOUT,
    ) {}

    /** The same settings with the driver and per-worker connection cap a ConnectionPlan decided. */
    public function withConnections(ConnectionPlan $plan): self
    {
        return new self(
            $this->listen,
            $this->workers,
            $this->maxRequests,
            $this->maxMemory,
            $this->drainTimeout,
            $this->pidFile,
            $this->daemon,
            $this->listenerMode,
            $plan->driver,
            $plan->connections,
            $this->errorLog,
            $this->accessLog,
            $this->logLevel,
            $this->memoryLimit,
            $plan->reason,
            $this->stallTimeout,
        );
    }

    /**
     * @param list<string> $listen HOST:PORT strings
     * @param string|null $errorLog file path, '-' for stderr, null for the default (stderr; the pid file's path with `.log` when daemon)
     * @param string|null $accessLog file path, '-' for stderr, null for off
     * @param int|string|null $memoryLimit a size (bytes, or `512M`), -1 / '-1' for none, null for the default
     */
    public static function create(
        array $listen = [self::DEFAULT_LISTEN],
        ?int $workers = null,
        int $maxRequests = 0,
        int|string $maxMemory = '256M',
        float $drainTimeout = 30.0,
        ?string $pidFile = null,
        bool $daemon = false,
        ListenerMode|string $listenerMode = ListenerMode::Shared,
        string $driver = 'auto',
        int $connections = 512,
        ?string $errorLog = null,
        ?string $accessLog = null,
        LogLevel|string $logLevel = LogLevel::Info,
        int|string|null $memoryLimit = null,
        float $stallTimeout = self::DEFAULT_STALL_TIMEOUT,
    ): self {
        $addresses = [];
        foreach ($listen as $address) {
            $parsed = ListenAddress::parse($address);
            // Binding it twice would fail as if another process listened there; port 0 is a new free port each time.
            if ($parsed->port !== 0 && \in_array($parsed, $addresses)) {
                throw new \ValueError("--listen={$parsed->authority()} is given twice");
            }
            $addresses[] = $parsed;
        }
        if ($addresses === []) {
            throw new \ValueError('At least one listen address is needed, e.g. --listen=127.0.0.1:8080');
        }
        $workers ??= self::cpuCount();
        if ($workers < 1 || $workers > 1024) {
            throw new \ValueError("--workers must be between 1 and 1024, got $workers");
        }
        if ($maxRequests < 0) {
            throw new \ValueError("--max-requests must be 0 (unlimited) or more, got $maxRequests");
        }
        $maxMemory = \is_int($maxMemory) ? $maxMemory : self::parseSize($maxMemory);
        if ($maxMemory < 0) {
            throw new \ValueError("--max-memory must be 0 (unlimited) or a size like 128M, got $maxMemory");
        }
        if (\is_string($memoryLimit)) {
            $memoryLimit = trim($memoryLimit) === '-1' ? -1 : self::parseSize($memoryLimit);
        }
        if ($memoryLimit !== null && $memoryLimit !== -1) {
            if ($memoryLimit < self::MIN_MEMORY_LIMIT) {
                throw new \ValueError('--memory-limit must be at least 16M (or -1 for none), got ' . self::size($memoryLimit));
            }
            if ($maxMemory > 0 && $memoryLimit <= $maxMemory) {
                throw new \ValueError('--memory-limit (' . self::size($memoryLimit) . ') must be above --max-memory (' . self::size($maxMemory)
                    . '): a worker is replaced gracefully past --max-memory, and stopped by PHP at --memory-limit');
            }
        }
        if (!is_finite($drainTimeout) || $drainTimeout < 0) {
            throw new \ValueError("--drain-timeout must be 0 or more seconds, got $drainTimeout");
        }
        if (!is_finite($stallTimeout) || $stallTimeout < 0 || ($stallTimeout > 0 && $stallTimeout < 0.5)) {
            throw new \ValueError("--stall-timeout must be 0 (off) or at least 0.5 seconds, got $stallTimeout");
        }
        if ($pidFile === '') {
            throw new \ValueError('Pid file path is empty; give a file path, e.g. --pid-file=/run/kiln.pid');
        }
        if (!\in_array($driver, ['auto', 'select', 'epoll'], true)) {
            throw new \ValueError("Unknown loop driver '$driver'; use auto, select or epoll");
        }
        if ($connections < 1) {
            throw new \ValueError("--connections must be at least 1, got $connections");
        }
        if ($errorLog === '' || $accessLog === '') {
            throw new \ValueError("A log path is empty; give a file path, or '-' for stderr");
        }
        if (\is_string($listenerMode)) {
            $listenerMode = ListenerMode::tryFrom($listenerMode)
                ?? throw new \ValueError("Unknown listener mode '$listenerMode'; use shared or reuseport");
        }
        $logLevel = \is_string($logLevel) ? LogLevel::parse($logLevel) : $logLevel;

        return new self(
            $addresses,
            $workers,
            $maxRequests,
            $maxMemory,
            $drainTimeout,
            $pidFile,
            $daemon,
            $listenerMode,
            $driver,
            $connections,
            $errorLog,
            $accessLog,
            $logLevel,
            $memoryLimit,
            '',
            $stallTimeout,
        );
    }

    /**
     * The memory_limit every process of the server gets (bytes; -1: none): --memory-limit when given; else the
     * limit the user configured for PHP (php.ini, `php -d`) when it is one; else 4 × --max-memory (1G with the
     * defaults, DEFAULT_MEMORY_LIMIT when --max-memory is 0). Debian's CLI php.ini configures -1 (none); PHP
     * without a php.ini (`php -n`, the official Docker images) configures nothing and runs with its built-in
     * 128M, which is not a choice of the user's and is below the default --max-memory. A request that would take
     * more is ended by PHP's fatal error (500 for the requests in flight, the worker replaced) instead of taking
     * the host's memory.
     *
     * @param string|false $configured get_cfg_var('memory_limit') of the process that starts the server: what
     *                                 php.ini or `php -d` set, false when nothing did
     */
    public function workerMemoryLimit(string|false $configured): int
    {
        if ($this->memoryLimit !== null) {
            return $this->memoryLimit;
        }
        $own = $configured === false || trim($configured) === '' ? -1 : @\ini_parse_quantity($configured);
        if ($own > 0) {
            return $own;
        }
        return $this->maxMemory > 0 ? 4 * $this->maxMemory : self::DEFAULT_MEMORY_LIMIT;
    }

    /** Bytes as the options spell sizes: `512M`, `1G`, or bytes. */
    public static function size(int $bytes): string
    {
        foreach (['G' => 30, 'M' => 20, 'K' => 10] as $suffix => $shift) {
            if ($bytes >= 1 << $shift && $bytes % (1 << $shift) === 0) {
                return ($bytes >> $shift) . $suffix;
            }
        }
        return (string) $bytes;
    }

    /** `128M`, `1G`, `512K`, `1048576` → bytes. */
    public static function parseSize(string $size): int
    {
        if (preg_match('/^\s*(\d+)\s*([KMG]?)B?\s*$/i', $size, $m) !== 1) {
            throw new \ValueError("Bad size '$size'; use a number of bytes or a suffix K, M or G, e.g. 128M");
        }
        $shift = ['' => 0, 'K' => 10, 'M' => 20, 'G' => 30][strtoupper($m[2])];
        return (int) $m[1] << $shift;
    }

    public static function cpuCount(string $cpuinfo = '/proc/cpuinfo'): int
    {
        $text = @file_get_contents($cpuinfo);
        if ($text === false) {
            return 1;
        }
        return max(1, (int) preg_match_all('/^processor\s*:/m', $text));
    }

    /** The pid file in use, given the listen address as bound (its real port). */
    public function pidFilePath(?ListenAddress $bound = null): string
    {
        if ($this->pidFile !== null) {
            return $this->pidFile;
        }
        return self::defaultPidFile($bound ?? $this->listen[0]);
    }

    public static function defaultPidFile(ListenAddress $address): string
    {
        $key = preg_replace('/[^0-9A-Za-z.]+/', '_', $address->host) . '-' . $address->port;
        return rtrim(sys_get_temp_dir(), '/') . "/kiln-$key.pid";
    }

    /**
     * The error log path: '-' is stderr; a daemon has no stderr, so it defaults to the pid file's path with `.log`
     * for `.pid` (kiln-127.0.0.1-8080.log beside kiln-127.0.0.1-8080.pid): two daemons never share a log.
     */
    public function errorLogPath(string $pidFile): string
    {
        if ($this->errorLog !== null) {
            return $this->errorLog;
        }
        return $this->daemon ? (string) preg_replace('/(\.pid)?$/', '.log', $pidFile, 1) : '-';
    }
}
