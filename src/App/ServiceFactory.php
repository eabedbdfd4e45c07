<?php

declare(strict_types=1);

namespace Kiln\App;

use Kiln\App\Internal\Jobs;
use Kiln\App\Internal\LifecycleService;
use Kiln\App\Internal\MiddlewareHandler;
use Kiln\App\Middleware\TrustedProxies;
use Kiln\Http\AccessLog;
use Kiln\Http\AccessLogFormat;
use Kiln\Http\HttpServer;
use Kiln\Http\Limits;
use Kiln\Http\WebSocket\WebSocketConfig;
use Kiln\Http\WebSocket\WebSocketServer;
use Kiln\Server\Background\AppBackground;
use Kiln\Server\LogFile;
use Kiln\Server\Service;
use Kiln\Server\WorkerLog;
use Kiln\Site\DocumentRoot;
use Kiln\Site\SiteConfig;
use Kiln\Site\Tier;

/** Builds what a worker serves, inside the worker (so every worker generation loads the code afresh). */
final class ServiceFactory
{
    public const KIND_SCRIPT = 'script';
    public const KIND_DOCROOT = 'docroot';

    /**
     * @param ?SiteConfig $site how a document root runs its scripts; null: the defaults (tier auto)
     * @param list<string> $documentRootOptions the options given that only a document root uses (`tier`, …): an app
     *        without `$app->site()` leaves them unused, which is logged
     */
    public static function create(string $path, string $kind, Limits $limits, ?LogFile $accessLog, ?SiteConfig $site = null, ?WebSocketConfig $webSocket = null, string $accessLogFormat = 'combined', float $slowRequest = 0.0, array $documentRootOptions = []): Service
    {
        $site ??= SiteConfig::create();
        $webSockets = new WebSocketServer($limits, $webSocket ?? new WebSocketConfig());
        $handler = match ($kind) {
            self::KIND_SCRIPT => App::load($path),
            self::KIND_DOCROOT => self::documentRoot($path, $site),
            default => throw new \ValueError("Unknown target kind '$kind'"),
        };
        if ($handler instanceof App) {
            if (!$handler->configureSite($site) && $documentRootOptions !== []) {
                WorkerLog::write('warning', implode(', ', array_map(static fn(string $name): string => "--$name", $documentRootOptions))
                    . ' set how a document root runs, and this app has none ($app->site()): ignored');
            }
            $handler->configureWebSockets($webSockets);
            $handler->configureRealtime($limits);
        }
        $schedule = $handler instanceof App ? $handler->schedule() : null;
        if ($site->trustedProxies !== []) {
            // `--trusted-proxies`: the client, scheme and host a trusted proxy forwards, before anything else runs.
            $handler = new MiddlewareHandler(new TrustedProxies($site->trustedProxies), $handler);
        }
        // A document root whose scripts run in the worker serves one request at a time: it takes a connection when free
        // (an app's routes, streams and sockets keep taking them at once, whatever tier its site uses).
        $oneAtATime = $kind === self::KIND_DOCROOT && $site->tier === Tier::Sequential;
        $server = new HttpServer($handler, $limits, $accessLog === null ? null : new AccessLog($accessLog, format: AccessLogFormat::from($accessLogFormat)), $webSockets, $slowRequest, $oneAtATime);
        // The app's timers and worker hooks (App::every(), onWorkerStart()…) run around the HTTP service.
        return $schedule === null ? $server : new LifecycleService($server, $schedule);
    }

    /** What the task workers and user processes find in the target: an app's tasks and processes; a document root has none. */
    public static function background(string $path, string $kind): AppBackground
    {
        if ($kind !== self::KIND_SCRIPT) {
            return new Jobs();
        }
        $handler = App::load($path);
        return $handler instanceof App ? $handler->background() : new Jobs();
    }

    /**
     * A worker that serves only a document root works in it: a script in the root then runs without a change
     * of directory before and after it (the sequential tier; nothing else in such a worker reads the working
     * directory, every path Kiln keeps is absolute).
     */
    private static function documentRoot(string $path, SiteConfig $site): DocumentRoot
    {
        $documentRoot = DocumentRoot::forSite($path, $site);
        @chdir($documentRoot->root());
        return $documentRoot;
    }
}
