<?php

declare(strict_types=1);

namespace Kiln\Server;

/**
 * The process model's settings, validated once in create(). Defaults:
 * listen 127.0.0.1:8080, workers = CPU count, maxRequests 0 (never; as php-fpm), maxMemory 256M
 * (0 = unlimited), drainTimeout 30 s, shared listener, auto driver, 512 connections per worker.
 * pidFile null = `kiln-HOST-PORT.pid` in the system temp dir, keyed by the first listen address
 * (with its real port once bound), so two servers on different ports never share one.
 */
final class Config
{
    public const DEFAULT_LISTEN = '127.0.0.1:8080';

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
        /** What decided the driver and the connection cap (ConnectionPlan), for the start-up line; '' when nothing did. */
        public readonly string $connectionsNote = '',
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
            $plan->reason,
        );
    }

    /**
     * @param list<string> $listen HOST:PORT strings
     * @param string|null $errorLog file path, '-' for stderr, null for the default (stderr; `kiln.log` beside the pid file when daemon)
     * @param string|null $accessLog file path, '-' for stderr, null for off
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
    ): self {
        $addresses = [];
        foreach ($listen as $address) {
            $addresses[] = ListenAddress::parse($address);
        }
        if ($addresses === []) {
            throw new \ValueError('At least one listen address is needed, e.g. --listen=127.0.0.1:8080');
        }
        $workers ??= self::cpuCount();
        if ($workers < 1 || $workers > 1024) {
            throw new \ValueError("Workers must be between 1 and 1024, got $workers");
        }
        if ($maxRequests < 0) {
            throw new \ValueError("Max requests must be 0 (unlimited) or more, got $maxRequests");
        }
        $maxMemory = \is_int($maxMemory) ? $maxMemory : self::parseSize($maxMemory);
        if ($maxMemory < 0) {
            throw new \ValueError("Max memory must be 0 (unlimited) or a size like 128M, got $maxMemory");
        }
        if (!is_finite($drainTimeout) || $drainTimeout < 0) {
            throw new \ValueError("Drain timeout must be 0 or more seconds, got $drainTimeout");
        }
        if ($pidFile === '') {
            throw new \ValueError('Pid file path is empty; give a file path, e.g. --pid-file=/run/kiln.pid');
        }
        if (!\in_array($driver, ['auto', 'select', 'epoll'], true)) {
            throw new \ValueError("Unknown loop driver '$driver'; use auto, select or epoll");
        }
        if ($connections < 1) {
            throw new \ValueError("Connections must be at least 1, got $connections");
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
        );
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

    /** The error log path: '-' is stderr; a daemon has no stderr, so it defaults to kiln.log beside the pid file. */
    public function errorLogPath(string $pidFile): string
    {
        if ($this->errorLog !== null) {
            return $this->errorLog;
        }
        return $this->daemon ? \dirname($pidFile) . '/kiln.log' : '-';
    }
}
