<?php

declare(strict_types=1);

namespace Kiln\Cli;

use Kiln\Http\Limits;
use Kiln\Http\WebSocket\WebSocketConfig;
use Kiln\Redis\RedisConfig;
use Kiln\Server\Background\TaskSettings;
use Kiln\Server\Config;
use Kiln\Server\ListenAddress;
use Kiln\Site\SiteConfig;
use Kiln\Site\SymlinkPolicy;

/**
 * `kiln serve PATH [options]` read into its parts: what to serve, how to run, HTTP limits, and how a
 * document root runs its scripts.
 */
final class ServeOptions
{
    public const VALUED = ['listen', 'workers', 'pid-file', 'max-requests', 'max-memory', 'memory-limit', 'drain-timeout',
        'access-log', 'error-log', 'log-level', 'driver', 'connections', 'listener', 'jit', 'pool-jit', 'pool-reuse', 'pool-sched',
        'tier', 'time-limit', 'pool-size', 'pool-max-requests', 'pool-queue', 'php-cgi', 'php-ini', 'pass-env',
        'fastcgi', 'fastcgi-map', 'cgi-bin', 'fork-max', 'front-controller', 'cache-control', 'trusted-proxies', 'ws-origins', 'symlinks',
        'task-workers', 'task-queue', 'task-timeout',
        'redis', 'redis-sentinel', 'redis-cluster', 'redis-cache-ttl',
        'admin-listen', 'access-log-format', 'slow-request', 'error-log-format', 'stall-timeout'];
    public const FLAGS = ['daemon', 'no-htaccess', 'ws-deflate', 'watch', 'dev', 'admin-public'];
    public const LIMIT_PREFIX = 'limit-';

    /** Options that only a document root uses: an app.php without `$app->site()` has nothing they apply to. */
    public const DOCUMENT_ROOT_OPTIONS = ['tier', 'time-limit', 'pool-size', 'pool-max-requests', 'pool-queue', 'pool-jit', 'pool-reuse', 'pool-sched',
        'php-cgi', 'php-ini', 'pass-env', 'fastcgi', 'fastcgi-map', 'cgi-bin', 'fork-max', 'front-controller', 'cache-control',
        'symlinks', 'no-htaccess'];

    /** Options whose values hold commas: in env, their values are separated by `;` instead. */
    public const ENV_SEPARATORS = ['cache-control' => ';', 'redis' => ';', 'redis-sentinel' => ';', 'redis-cluster' => ';'];

    private function __construct(
        public readonly Target $target,
        public readonly Config $config,
        public readonly Limits $limits,
        public readonly SiteConfig $site,
        /** on: opcache + tracing JIT in the workers (see JitLauncher); opcache: opcache alone (--dev); off: as PHP was started */
        public readonly string $jit = 'on',
        public readonly WebSocketConfig $webSocket = new WebSocketConfig(),
        /** The connection cap asked for (--connections, --limit-connections or their env); null: the driver's default. */
        public readonly ?int $connections = null,
        /** --task-workers, --task-queue, --task-timeout */
        public readonly TaskSettings $tasks = new TaskSettings(),
        /** --redis (or --redis-sentinel, --redis-cluster): the Redis the nodes share; null: each node on its own. */
        public readonly ?RedisConfig $redis = null,
        /** --redis-cache-ttl: how long a node keeps its own copy of a cache entry read from Redis (seconds). */
        public readonly int $redisCacheTtl = 5,
        /** --watch: reload the workers when the served folder's PHP files change (SourceWatch) */
        public readonly bool $watch = false,
        /** --admin-listen: where /metrics, /health and /ready are served; null: off */
        public readonly ?ListenAddress $admin = null,
        /** --access-log-format: combined or json */
        public readonly string $accessLogFormat = 'combined',
        /** --slow-request: seconds past which a request is logged as a warning; 0: off */
        public readonly float $slowRequest = 0.0,
        /** --error-log-format=json: the error log as JSON lines */
        public readonly bool $errorLogJson = false,
        /** @var list<string> the DOCUMENT_ROOT_OPTIONS given (command line or env), for a warning when nothing uses them */
        public readonly array $documentRootOptions = [],
    ) {}

    /**
     * @param list<string> $args
     * @param array<string, string> $env
     * @throws UsageException
     */
    public static function parse(array $args, array $env, string $cwd): self
    {
        $options = Options::parse($args, $env, self::VALUED, self::FLAGS, self::LIMIT_PREFIX, self::ENV_SEPARATORS);
        try {
            return self::from($options, $env, $cwd);
        } catch (UsageException $e) {
            // A bad value set in the environment is named as the variable, not as an option nobody typed.
            throw new UsageException($options->inUsersTerms($e->getMessage()), 0, $e);
        }
    }

    /**
     * @param array<string, string> $env
     * @throws UsageException
     */
    private static function from(Options $options, array $env, string $cwd): self
    {
        if ($options->positional === []) {
            throw new UsageException('PATH is missing: kiln serve PATH (an app.php, a directory holding app.php, or a document root)');
        }
        if (\count($options->positional) > 1) {
            throw new UsageException('Only one PATH can be served, got: ' . implode(' ', $options->positional));
        }
        $target = Target::resolve($options->positional[0], $cwd);
        $absolute = static fn(?string $path): ?string => $path === null || $path === '-' || $path === 'off'
            || str_starts_with($path, '/') ? $path : rtrim($cwd, '/') . '/' . $path;
        $accessLog = $absolute($options->string('access-log'));
        try {
            $limitValues = [];
            foreach ($options->prefixed(self::LIMIT_PREFIX) as $name => $value) {
                $limitValues[lcfirst(str_replace(' ', '', ucwords(str_replace('-', ' ', $name))))] = $value;
            }
            $connections = $options->int('connections');
            if ($connections === 0) {
                // Checked here, as the user typed it: Limits would name the option it becomes, --limit-connections.
                throw new UsageException('--connections must be 1 or more, got 0');
            }
            if ($connections !== null) {
                $limitValues['connections'] = $connections;
            }
            $limits = Limits::fromArray($limitValues);
            $config = Config::create(
                listen: $options->all('listen') !== [] ? $options->all('listen') : [Config::DEFAULT_LISTEN],
                workers: $options->int('workers'),
                maxRequests: $options->int('max-requests') ?? 0,
                maxMemory: $options->string('max-memory') ?? '256M',
                memoryLimit: $options->string('memory-limit'),
                drainTimeout: $options->float('drain-timeout') ?? 30.0,
                stallTimeout: $options->float('stall-timeout') ?? self::defaultStallTimeout($options->flag('dev'), $env),
                pidFile: $absolute($options->string('pid-file')),
                daemon: $options->flag('daemon'),
                listenerMode: $options->string('listener') ?? 'shared',
                driver: $options->string('driver') ?? 'auto',
                connections: $limits->connections,
                errorLog: $absolute($options->string('error-log')),
                accessLog: $accessLog === 'off' ? null : $accessLog,
                logLevel: $options->string('log-level') ?? 'info',
            );
            $tasks = new TaskSettings(
                workers: $options->int('task-workers') ?? 0,
                queue: $options->int('task-queue') ?? 64,
                timeout: $options->float('task-timeout') ?? 60.0,
            );
            $webSocket = new WebSocketConfig(
                deflate: $options->flag('ws-deflate'),
                origins: array_values(array_filter(
                    array_map('trim', explode(',', implode(',', $options->all('ws-origins')))),
                    static fn(string $origin): bool => $origin !== '',
                )),
            );
        } catch (\ValueError $e) {
            throw new UsageException($e->getMessage(), 0, $e);
        }
        $jit = $options->string('jit');
        if ($jit !== null && $jit !== 'on' && $jit !== 'off') {
            throw new UsageException("--jit must be on or off, got '$jit'");
        }
        // --dev runs the workers with opcache but without the JIT, unless --jit says otherwise (docs/development.md).
        $jit ??= $options->flag('dev') ? JitLauncher::OPCACHE_ONLY : 'on';
        $requested = isset($limitValues['connections']) ? $limits->connections : null;
        $format = $options->string('access-log-format') ?? 'combined';
        if ($format !== 'combined' && $format !== 'json') {
            throw new UsageException("--access-log-format must be combined or json, got '$format'");
        }
        $slow = $options->float('slow-request') ?? 0.0;
        $errorFormat = $options->string('error-log-format') ?? 'text';
        if ($errorFormat !== 'text' && $errorFormat !== 'json') {
            throw new UsageException("--error-log-format must be text or json, got '$errorFormat'");
        }
        $watch = $options->flag('watch');
        if ($watch && $config->daemon) {
            throw new UsageException('--watch is for development in a terminal: it cannot be combined with --daemon');
        }
        return new self(
            $target,
            $config,
            $limits,
            self::site($options, $env, $cwd),
            $jit,
            $webSocket,
            $requested,
            $tasks,
            self::redis($options),
            self::positive($options, 'redis-cache-ttl', 5),
            $watch,
            self::admin($options, $config),
            $format,
            $slow,
            $errorFormat === 'json',
            array_values(array_filter(self::DOCUMENT_ROOT_OPTIONS, $options->has(...))),
        );
    }

    /** @throws UsageException */
    private static function positive(Options $options, string $name, int $default): int
    {
        $value = $options->int($name) ?? $default;
        return $value >= 1 ? $value : throw new UsageException("--$name must be 1 or more, got $value");
    }

    /**
     * `--redis=URI` (any form RedisConfig::fromUri() reads), or the shorthands `--redis-sentinel=HOST:PORT,…/MASTER`
     * and `--redis-cluster=HOST:PORT,…`; at most one of the three.
     *
     * @throws UsageException
     */
    private static function redis(Options $options): ?RedisConfig
    {
        $given = array_filter([
            'redis' => $options->string('redis'),
            'redis-sentinel' => $options->string('redis-sentinel'),
            'redis-cluster' => $options->string('redis-cluster'),
        ], static fn(?string $value): bool => $value !== null && $value !== '');
        if ($given === []) {
            return null;
        }
        if (\count($given) > 1) {
            throw new UsageException('Give one of --redis, --redis-sentinel and --redis-cluster, not ' . implode(' and ', array_map(static fn(string $name): string => "--$name", array_keys($given))));
        }
        $name = array_key_first($given);
        $value = (string) $given[$name];
        $uri = match ($name) {
            'redis-sentinel' => 'redis+sentinel://' . $value,
            'redis-cluster' => 'redis+cluster://' . $value,
            default => $value,
        };
        try {
            return RedisConfig::fromUri($uri);
        } catch (\ValueError $e) {
            throw new UsageException("--$name: " . $e->getMessage(), 0, $e);
        }
    }

    /**
     * The admin listener: never the public listener's port, and only on a loopback address unless --admin-public.
     *
     * @throws UsageException
     */
    private static function admin(Options $options, Config $config): ?ListenAddress
    {
        $value = $options->string('admin-listen');
        if ($value === null || $value === 'off') {
            return null;
        }
        try {
            $admin = ListenAddress::parse($value);
        } catch (\ValueError $e) {
            throw new UsageException('--admin-listen: ' . $e->getMessage(), 0, $e);
        }
        $wildcard = ['0.0.0.0', '::', '*'];
        foreach ($config->listen as $public) {
            if ($admin->port !== 0 && $admin->port === $public->port
                && ($admin->host === $public->host || \in_array($admin->host, $wildcard, true) || \in_array($public->host, $wildcard, true))) {
                throw new UsageException("--admin-listen={$admin->authority()} is the public listener's address: give the admin listener its own port, e.g. 127.0.0.1:9180");
            }
        }
        $loopback = $admin->host === 'localhost' || $admin->host === '::1' || str_starts_with($admin->host, '127.');
        if (!$loopback && !$options->flag('admin-public')) {
            throw new UsageException("--admin-listen={$admin->authority()} is not a loopback address: /metrics and /ready would be public; add --admin-public if that is meant");
        }
        return $admin;
    }

    /**
     * @param array<string, string> $env
     * @throws UsageException
     */
    private static function site(Options $options, array $env, string $cwd): SiteConfig
    {
        $poolJit = $options->string('pool-jit') ?? 'off';
        if ($poolJit !== 'on' && $poolJit !== 'off') {
            throw new UsageException("--pool-jit must be on or off, got '$poolJit'");
        }
        $poolSched = $options->string('pool-sched') ?? 'normal';
        if ($poolSched !== 'batch' && $poolSched !== 'normal') {
            throw new UsageException("--pool-sched must be normal or batch, got '$poolSched'");
        }
        $frontController = $options->string('front-controller');
        try {
            return SiteConfig::create(
                tier: $options->string('tier') ?? 'auto',
                timeLimit: $options->float('time-limit') ?? 30.0,
                poolSize: $options->int('pool-size') ?? 4,
                poolMaxRequests: $options->int('pool-max-requests') ?? 10_000,
                poolQueue: $options->int('pool-queue') ?? 512,
                phpCgi: $options->string('php-cgi'),
                phpIni: self::pairs($options->all('php-ini'), 'php-ini', 'NAME=VALUE'),
                passEnv: $options->all('pass-env'),
                fastcgi: $options->string('fastcgi'),
                fastcgiMap: self::pairs($options->all('fastcgi-map'), 'fastcgi-map', 'EXT=ADDR (.py=127.0.0.1:9001)'),
                cgiBin: $options->string('cgi-bin'),
                forkMax: $options->int('fork-max') ?? 8,
                frontController: \in_array($frontController, ['off', 'none', ''], true) ? null : ($frontController ?? '/index.php'),
                searchPath: $env['PATH'] ?? (string) getenv('PATH'),
                cwd: $cwd,
                htaccess: !$options->flag('no-htaccess'),
                poolJit: $poolJit === 'on',
                poolReuse: $options->int('pool-reuse') ?? 16,
                poolBatch: $poolSched === 'batch',
                cacheControl: $options->all('cache-control'),
                symlinks: SymlinkPolicy::fromOption($options->string('symlinks') ?? 'inside'),
                trustedProxies: array_values(array_filter(
                    array_map('trim', explode(',', implode(',', $options->all('trusted-proxies')))),
                    static fn(string $entry): bool => $entry !== '',
                )),
                dev: $options->flag('dev'),
            );
        } catch (\ValueError $e) {
            throw new UsageException($e->getMessage(), 0, $e);
        }
    }

    /**
     * 60 s, but off under --dev or with Xdebug's step debugger (XDEBUG_MODE or xdebug.mode holding `debug`):
     * a breakpoint stops the worker's loop for as long as the developer looks (docs/design/028).
     *
     * @param array<string, string> $env
     */
    private static function defaultStallTimeout(bool $dev, array $env): float
    {
        $mode = $env['XDEBUG_MODE'] ?? (\extension_loaded('xdebug') ? (string) \ini_get('xdebug.mode') : '');
        $debugger = \in_array('debug', array_map('trim', explode(',', $mode)), true);
        return $dev || $debugger ? 0.0 : Config::DEFAULT_STALL_TIMEOUT;
    }

    /**
     * @param list<string> $values
     * @return array<string, string>
     * @throws UsageException
     */
    private static function pairs(array $values, string $option, string $form): array
    {
        $pairs = [];
        foreach ($values as $value) {
            $equals = strpos($value, '=');
            if ($equals === false || $equals === 0) {
                throw new UsageException("--$option must be $form, got '$value'");
            }
            $pairs[substr($value, 0, $equals)] = substr($value, $equals + 1);
        }
        return $pairs;
    }
}
