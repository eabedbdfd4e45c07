<?php

declare(strict_types=1);

namespace Kiln\Cli;

use Kiln\App\ServiceFactory;
use Kiln\Redis\Endpoint;
use Kiln\Server\Background\BackgroundProcesses;
use Kiln\Server\Config;
use Kiln\Server\ConnectionPlan;
use Kiln\Server\Listeners;
use Kiln\Server\Log;
use Kiln\Server\LogFile;
use Kiln\Server\Metrics\AdminServer;
use Kiln\Server\Metrics\Registry;
use Kiln\Server\PidFile;
use Kiln\Server\ServerException;
use Kiln\Server\StatusFile;
use Kiln\Server\Supervisor;
use Kiln\Site\Sequential\CodeRevalidation;
use Kiln\Site\Sequential\SequentialRunner;
use Kiln\Site\Sequential\StartupIni;
use Kiln\Site\Tier;
use Kiln\Store\NearCache;
use Kiln\Store\NodeBus;
use Kiln\Store\NodeState;
use Kiln\Store\RedisBus;
use Kiln\Store\RedisStore;
use Kiln\Store\StoreState;

/**
 * `kiln serve`: binds, checks the pid file, opens the logs (all before daemonizing, so those errors
 * reach the terminal), then hands over to the Supervisor. The app itself is loaded in each worker.
 */
final class ServeCommand
{
    /**
     * @param resource $stderr
     */
    public function __construct(private readonly mixed $stderr) {}

    /**
     * @param list<string> $args
     * @param array<string, string> $env
     * @throws UsageException
     */
    public function run(array $args, array $env, string $cwd): int
    {
        $options = ServeOptions::parse($args, $env, $cwd);
        // Every process forked from here (workers, task workers, the fork server) inherits it (Debian's CLI php.ini
        // sets none). Given to the relaunched PHP on its command line, it is a startup value there, as it must be
        // for the sequential tier's native reset of the settings scripts change (set at run time, it disables it).
        $configured = \get_cfg_var('memory_limit');
        $memoryLimit = $options->config->workerMemoryLimit(\is_string($configured) ? $configured : false);
        $spelled = $memoryLimit === -1 ? '-1' : Config::size($memoryLimit);
        // The sequential tier's --php-ini settings PHP takes only at start-up (upload_max_filesize…) go there too,
        // and its JIT mode (StartupIni::jit()).
        $startup = StartupIni::of($options->site) + StartupIni::jit($options->site, $options->jit) + ['memory_limit' => $spelled];
        JitLauncher::relaunch($options->jit, $args, $startup);
        // A tier that cannot run here (the sequential tier without FFI) is refused as each worker builds its
        // site, for a document root and an app's site() alike (RunnerFactory::tierMap()): a start-up error.
        // The sequential tier's engine probes, made once here rather than in every worker (and every
        // replacement of a worker after a script's exit()).
        SequentialRunner::prepareProcess();
        // The driver and connection cap, and the open-files limit they need, before the workers inherit it.
        try {
            /** @var 'auto'|'epoll'|'select' $driver */
            $driver = $options->config->driver;
            $plan = ConnectionPlan::forThisProcess($driver, $options->connections, $options->limits->concurrency);
            $plan->apply();
        } catch (ServerException $e) {
            return $this->fail($e->getMessage());
        }
        $config = $options->config->withConnections($plan);
        // Not relaunched (opcache already on, --jit=off), or a -d of the user's differs from --memory-limit: at run time.
        $phpLimit = (string) \ini_get('memory_limit');
        if ($spelled !== $phpLimit && @\ini_set('memory_limit', $spelled) === false) {
            return $this->fail("Cannot set memory_limit to $spelled (--memory-limit)");
        }
        $listeners = new Listeners($config->listen, $config->listenerMode);
        try {
            $listeners->open();
            $pidFile = new PidFile($config->pidFilePath($listeners->bound()[0]));
            $stalePid = $pidFile->check();
        } catch (ServerException $e) {
            $listeners->close();
            return $this->fail($e->getMessage());
        }
        try {
            $errorLogPath = $config->errorLogPath($pidFile->path);
            $errorLog = $errorLogPath === '-' ? LogFile::stderr() : new LogFile($errorLogPath);
            $errorLog->open();
            $accessLog = match ($config->accessLog) {
                null => null,
                '-' => LogFile::stderr(),
                default => new LogFile($config->accessLog),
            };
            $accessLog?->open();
            $admin = $options->admin === null ? null : new AdminServer($options->admin);
            $admin?->listen();
        } catch (ServerException $e) {
            $pidFile->remove();
            $listeners->close();
            return $this->fail($e->getMessage());
        }
        $daemon = null;
        if ($config->daemon) {
            $daemon = new Daemon();
            $code = $daemon->detach($this->stderr, errorLog: $errorLog->isStderr() ? null : $errorLog->path);
            if ($code !== null) {
                $listeners->close();
                return $code;
            }
            $errorLog->reopen(); // The daemon's own handle, not one shared with the launcher.
            $errorLog->carryStderr(); // its stderr is the error log too: a rotation moves both
        }
        $log = new Log($errorLog, $config->logLevel, $options->errorLogJson);
        if ($memoryLimit !== -1 && $config->maxMemory > 0 && $memoryLimit <= $config->maxMemory) {
            $log->warning('memory_limit ' . Config::size($memoryLimit) . ' is not above --max-memory=' . Config::size($config->maxMemory)
                . ': a worker that grows ends in a fatal error (500s) before it can be replaced gracefully; raise --memory-limit or lower --max-memory');
        }
        if ($options->target->kind === Target::DOCROOT && ($warning = $options->site->symlinks->startupWarning($options->target->path)) !== null) {
            $log->warning($warning);
        }
        if ($stalePid !== null) {
            $log->warning("replacing the stale pid file {$pidFile->path} (" . PidFile::whyStale($stalePid) . ')');
        }
        // Only the sequential tier includes scripts in the workers on every request (an app.php may ask for it).
        $sequential = $options->target->kind !== Target::DOCROOT || $options->site->tier === Tier::Sequential;
        if ($sequential && ($warning = JitLauncher::fileUpdateProtectionWarning()) !== null) {
            $log->warning($warning);
        }
        if ($options->target->kind === Target::DOCROOT && ($warning = $options->site->stallTimeoutWarning($config->stallTimeout)) !== null) {
            $log->warning($warning);
        }
        $target = $options->target;
        $limits = $options->limits->withConnections($plan->connections);
        $site = $options->site;
        $webSocket = $options->webSocket;
        $redis = $options->redis;
        if ($redis !== null) {
            // Where, never with whom: the password stays out of the log.
            $where = implode(',', array_map(static fn(Endpoint $endpoint): string => (string) $endpoint, $redis->endpoints));
            $log->info("node bus and Store: Redis ({$redis->mode->name}) at $where, shared with every node given the same Redis");
        }
        // In each worker, task worker and user process, before the app is built: its boot code, its Hub and the
        // scripts' gateway use this bus, and its Store, counters, cache and sessions this store.
        $nearTtl = $options->redisCacheTtl;
        $shareRedis = static function () use ($redis, $env, $nearTtl): void {
            if ($redis !== null) {
                $bus = new RedisBus($redis);
                NodeBus::set($bus);
                $secret = $env['KILN_REDIS_SECRET'] ?? getenv('KILN_REDIS_SECRET');
                $near = new NearCache(NodeState::localStore(), $bus, NodeState::nodeId(), $nearTtl, \is_string($secret) && $secret !== '' ? $secret : null);
                $near->listen();
                $store = RedisStore::connect($redis);
                NodeState::setStore($store, $near);
                NodeState::setEventState(new StoreState($store, 'kiln:state:'));
                // For /metrics and /ready (docs/design/024): whether Redis answers this process, and how often it came back.
                $registry = Registry::current();
                // One series per process (its pid): the node's /metrics sums the workers' series, and a 0/1 gauge summed
                // over the workers read 2 with two workers that reach Redis.
                $up = $registry->gauge('kiln_redis_up', 'Whether Redis answered the worker with this pid the last time it used it (1) or not (0)', ['pid']);
                $pid = (string) getmypid();
                $reconnects = $registry->counter('kiln_redis_reconnects_total', 'Times Redis answered again after it was found unreachable');
                $counted = 0;
                $registry->sampler(static function () use ($bus, $store, $up, $pid, $reconnects, &$counted): void {
                    $up->set($bus->reachable() && $store->reachable() ? 1 : 0, $pid);
                    $recoveries = $bus->recoveries() + $store->recoveries();
                    $reconnects->inc($recoveries - $counted);
                    $counted = $recoveries;
                });
            }
        };
        $watch = $options->watch ? new SourceWatch(SourceWatch::folderOf($target), $log) : null;
        $accessLogFormat = $options->accessLogFormat;
        $slowRequest = $options->slowRequest;
        // The workers share this process's opcache: it looks at edited files for all of them (docs/tiers.md).
        $code = CodeRevalidation::forWorkers();
        $supervisor = new Supervisor(
            $config,
            $listeners,
            $log,
            static function () use ($target, $limits, $accessLog, $site, $webSocket, $shareRedis, $accessLogFormat, $slowRequest, $options) {
                $shareRedis();
                return ServiceFactory::create($target->path, $target->kind, $limits, $accessLog, $site, $webSocket, $accessLogFormat, $slowRequest, $options->documentRootOptions);
            },
            $accessLog === null ? [] : [$accessLog],
            StatusFile::besidePidFile($pidFile->path),
            $daemon === null ? null : static function () use ($daemon, $listeners, $pidFile, $errorLogPath): void {
                $urls = implode(' ', array_map(static fn($address): string => $address->url(), $listeners->bound()));
                $daemon->ready("serving $urls in the background: supervisor pid " . getmypid() . ", pid file {$pidFile->path}, "
                    . ($errorLogPath === '-' ? 'no error log (--error-log=-: a daemon has no stderr)' : "error log $errorLogPath"));
            },
            new BackgroundProcesses(
                $log,
                $options->tasks,
                static function () use ($target, $shareRedis) {
                    $shareRedis();
                    return ServiceFactory::background($target->path, $target->kind);
                },
                $target->kind === ServiceFactory::KIND_SCRIPT,
                $config->maxRequests,
                $config->maxMemory,
            ),
            $watch === null ? null : $watch->poll(...),
            $admin,
            $pidFile,
            $code === null ? null : static function (float $now, bool $reload) use ($code): void {
                $reload ? $code->checkNow($now) : $code->check($now);
            },
        );
        try {
            // The title first: from the moment the pid file names this process, `kiln stop|reload` must recognize it.
            @cli_set_process_title(PidFile::SUPERVISOR_TITLE);
            if (!PidFile::isSupervisor((int) getmypid())) {
                $log->warning('cannot set the process title "' . PidFile::SUPERVISOR_TITLE . '": kiln stop, reload '
                    . 'and status will not recognize this server; stop it with kill -TERM ' . getmypid());
            }
            $pidFile->write();
            return $supervisor->run();
        } catch (ServerException $e) {
            $daemon?->failed($e->getMessage());
            return $this->fail($e->getMessage());
        } finally {
            $pidFile->remove();
        }
    }

    private function fail(string $reason): int
    {
        if (\is_resource($this->stderr)) {
            @fwrite($this->stderr, "kiln: $reason\n");
        }
        return 1;
    }
}
