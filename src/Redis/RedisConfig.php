<?php

declare(strict_types=1);

namespace Kiln\Redis;

/**
 * Where Redis is and how to talk to it; made once, shared by clients, subscribers and pools.
 *
 * URIs (fromUri()):
 * - `redis://[user[:password]@]host[:port][/db]`, `rediss://...` for TLS, `redis:///path/to.sock` (unix)
 * - `redis+sentinel://[user:password@]host:26379,host2:26379/mastername[/db]` (rediss+sentinel for TLS)
 * - `redis+cluster://[user:password@]host:7000,host2:7001` (rediss+cluster for TLS)
 * Query options: connect_timeout, timeout (seconds), pool (connections per worker), protocol (2 or 3),
 * name (CLIENT SETNAME), verify_peer (0/1), cafile, sentinel_password, health_check (seconds between a
 * Subscriber's PINGs, 0 = none).
 */
final class RedisConfig
{
    /** @param non-empty-list<Endpoint> $endpoints */
    public function __construct(
        public readonly array $endpoints = [new Endpoint('127.0.0.1')],
        public readonly RedisMode $mode = RedisMode::Single,
        public readonly ?string $username = null,
        public readonly ?string $password = null,
        public readonly int $database = 0,
        public readonly bool $tls = false,
        public readonly bool $verifyPeer = true,
        public readonly ?string $cafile = null,
        public readonly float $connectTimeout = 5.0,
        public readonly float $commandTimeout = 5.0,
        public readonly int $poolSize = 1,
        public readonly int $protocol = 2,
        public readonly ?string $clientName = null,
        public readonly ?string $masterName = null,
        public readonly ?string $sentinelPassword = null,
        public readonly float $backoffInitial = 0.05,
        public readonly float $backoffMax = 5.0,
        /** A Subscriber PINGs this often and reconnects when a PING went unanswered until the next (0: never). */
        public readonly float $healthCheckInterval = 15.0,
    ) {
        if ($endpoints === []) {
            throw new \ValueError('RedisConfig needs at least one endpoint');
        }
        if ($database < 0 || ($database > 0 && $mode === RedisMode::Cluster)) {
            throw new \ValueError('The database is >= 0, and a Cluster has only database 0');
        }
        if ($connectTimeout <= 0 || $commandTimeout <= 0 || $backoffInitial <= 0 || $backoffMax < $backoffInitial) {
            throw new \ValueError('Timeouts must be > 0 and backoffInitial <= backoffMax');
        }
        if ($healthCheckInterval < 0) {
            throw new \ValueError('The health-check interval is >= 0 (0 turns it off)');
        }
        if ($poolSize < 1) {
            throw new \ValueError("The pool size is at least 1, got $poolSize");
        }
        if ($protocol !== 2 && $protocol !== 3) {
            throw new \ValueError("The protocol is 2 or 3, got $protocol");
        }
        if ($mode === RedisMode::Sentinel && ($masterName === null || $masterName === '')) {
            throw new \ValueError('Sentinel mode needs the master name (redis+sentinel://host:26379/mymaster)');
        }
    }

    public static function fromUri(string $uri): self
    {
        if (preg_match('~\A(rediss?)(?:\+(sentinel|cluster))?://(?:([^@/]*)@)?([^/?]*)(/[^?]*)?(?:\?(.*))?\z~', $uri, $m) !== 1) {
            throw new \ValueError("Not a Redis URI: \"$uri\" (redis://[user:password@]host[:port][/db], rediss://, redis+sentinel://, redis+cluster://)");
        }
        [, $scheme, $kind, $userInfo, $hosts] = $m;
        $path = $m[5] ?? '';
        parse_str($m[6] ?? '', $query);
        $mode = match ($kind) {
            'sentinel' => RedisMode::Sentinel,
            'cluster' => RedisMode::Cluster,
            default => RedisMode::Single,
        };
        [$username, $password] = self::userInfo($userInfo);
        $defaultPort = $mode === RedisMode::Sentinel ? 26379 : 6379;
        $endpoints = [];
        $database = 0;
        $masterName = null;
        if ($hosts === '' && $mode === RedisMode::Single && $path !== '') {
            $endpoints[] = new Endpoint(rawurldecode($path), 0);
            $database = (int) self::option($query, 'db', '0');
        } else {
            foreach (explode(',', $hosts === '' ? '127.0.0.1' : $hosts) as $host) {
                $endpoints[] = Endpoint::parse(rawurldecode($host), $defaultPort);
            }
            $segments = array_values(array_filter(explode('/', $path), static fn(string $s): bool => $s !== ''));
            if ($mode === RedisMode::Sentinel) {
                $masterName = isset($segments[0]) ? rawurldecode($segments[0]) : null;
                array_shift($segments);
            }
            if (isset($segments[0])) {
                if (!ctype_digit($segments[0])) {
                    throw new \ValueError("The database in \"$uri\" is not a number");
                }
                $database = (int) $segments[0];
            }
        }

        return new self(
            endpoints: $endpoints,
            mode: $mode,
            username: $username,
            password: $password,
            database: $database,
            tls: $scheme === 'rediss',
            verifyPeer: self::option($query, 'verify_peer', '1') !== '0',
            cafile: self::option($query, 'cafile', null),
            connectTimeout: (float) self::option($query, 'connect_timeout', '5'),
            commandTimeout: (float) self::option($query, 'timeout', '5'),
            poolSize: (int) self::option($query, 'pool', '1'),
            protocol: (int) self::option($query, 'protocol', '2'),
            clientName: self::option($query, 'name', null),
            masterName: $masterName,
            sentinelPassword: self::option($query, 'sentinel_password', null),
            healthCheckInterval: (float) self::option($query, 'health_check', '15'),
        );
    }

    /** A copy that talks to $endpoints alone, in single mode (a master a Sentinel named, a Cluster node). */
    public function forEndpoint(Endpoint $endpoint): self
    {
        return new self([$endpoint], RedisMode::Single, $this->username, $this->password, $this->mode === RedisMode::Cluster ? 0 : $this->database, $this->tls, $this->verifyPeer, $this->cafile, $this->connectTimeout, $this->commandTimeout, $this->poolSize, $this->protocol, $this->clientName, null, null, $this->backoffInitial, $this->backoffMax, $this->healthCheckInterval);
    }

    /** @return array{?string, ?string} */
    private static function userInfo(string $userInfo): array
    {
        if ($userInfo === '') {
            return [null, null];
        }
        if (!str_contains($userInfo, ':')) {
            return [null, rawurldecode($userInfo)];
        }
        [$user, $password] = explode(':', $userInfo, 2);

        return [$user === '' ? null : rawurldecode($user), rawurldecode($password)];
    }

    /**
     * @param array<mixed> $query
     *
     * @return ($default is null ? ?string : string)
     */
    private static function option(array $query, string $name, ?string $default): ?string
    {
        $value = $query[$name] ?? $default;
        if ($value !== null && !\is_string($value)) {
            throw new \ValueError("The Redis URI option $name takes one value");
        }

        return $value;
    }
}
