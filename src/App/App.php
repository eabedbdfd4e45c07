<?php

declare(strict_types=1);

namespace Kiln\App;

use Kiln\App\Handler\HandlerInvoker;
use Kiln\App\Internal\BlockingWatch;
use Kiln\App\Internal\Dispatcher;
use Kiln\App\Internal\Handover;
use Kiln\App\Internal\Jobs;
use Kiln\App\Internal\MiddlewareHandler;
use Kiln\App\Internal\Realtime;
use Kiln\App\Internal\Schedule;
use Kiln\App\Internal\SiteMount;
use Kiln\App\Middleware\Sessions;
use Kiln\App\Routing\ApiRoutes;
use Kiln\App\Routing\Route;
use Kiln\App\Routing\RouteCollector;
use Kiln\App\Routing\Router;
use Kiln\Http\Limits;
use Kiln\Http\Realtime\Hub;
use Kiln\Http\Request;
use Kiln\Http\RequestHandler;
use Kiln\Http\Response;
use Kiln\Http\Sse\EventStream;
use Kiln\Http\WebSocket\Connection;
use Kiln\Http\WebSocket\Message;
use Kiln\Http\WebSocket\WebSocketHandler;
use Kiln\Http\WebSocket\WebSocketServer;
use Kiln\Server\Background\AppBackground;
use Kiln\Server\Metrics\Registry;
use Kiln\Site\DocumentRoot;
use Kiln\Site\SiteConfig;
use Kiln\Store\Cache;
use Kiln\Store\Counter;
use Kiln\Store\NodeState;
use Kiln\Store\Session\SessionStore;
use Kiln\Store\Store;

/**
 * A Kiln application: routes, middleware and error pages. `app.php` builds one and returns it (or calls
 * run()). A request goes through the global middleware (in the order added), the route's groups' and its
 * own middleware, then its handler; whatever is thrown on the way is rendered by the error handler.
 */
final class App implements RequestHandler
{
    /** Request attribute holding the matched route's parameters (array<string, string>). */
    public const ROUTE_PARAMS = 'route_params';

    /** How long a handler may run without yielding before debug mode warns that it blocks its worker. */
    public const BLOCKING_WARNING_SECONDS = 0.1;

    private readonly RouteCollector $routes;

    private readonly Router $router;

    private readonly HandlerInvoker $invoker;

    private readonly ErrorHandler $errors;

    /** @var list<Middleware> */
    private array $middleware = [];

    private ?RequestHandler $entry = null;

    private ?SiteMount $siteMount = null;

    private ?DocumentRoot $site = null;

    private readonly Realtime $realtime;

    private readonly Schedule $schedule;

    private readonly Jobs $jobs;

    private ?Cache $cache = null;

    private ?SessionStore $sessions = null;

    private ?BlockingWatch $blockingWatch = null;

    public function __construct(public readonly bool $debug = false)
    {
        if ($debug) {
            $this->warnWhenBlocking(self::BLOCKING_WARNING_SECONDS);
        }
        $this->routes = new RouteCollector();
        $this->router = new Router($this->routes);
        $this->invoker = new HandlerInvoker();
        $this->errors = new ErrorHandler($debug);
        $this->schedule = new Schedule();
        $this->jobs = new Jobs();
        $this->realtime = new Realtime();
        // The dispatcher keeps what it made of each route: a route added later gets a new one.
        $this->routes->watch(function (): void {
            $this->entry = null;
        });
    }

    public function get(string $path, mixed $handler): Route
    {
        return $this->add(['GET'], $path, $handler);
    }

    public function post(string $path, mixed $handler): Route
    {
        return $this->add(['POST'], $path, $handler);
    }

    public function put(string $path, mixed $handler): Route
    {
        return $this->add(['PUT'], $path, $handler);
    }

    public function patch(string $path, mixed $handler): Route
    {
        return $this->add(['PATCH'], $path, $handler);
    }

    public function delete(string $path, mixed $handler): Route
    {
        return $this->add(['DELETE'], $path, $handler);
    }

    public function options(string $path, mixed $handler): Route
    {
        return $this->add(['OPTIONS'], $path, $handler);
    }

    public function any(string $path, mixed $handler): Route
    {
        $this->invoker->resolve($handler);
        return $this->routes->any($path, $handler);
    }

    /**
     * A WebSocket endpoint on GET $path: `$app->ws('/chat/{room}', new ChatHandler())`, or closures,
     * `$app->ws('/echo', fn(Connection $c, Message $m) => $c->send($m->payload), onOpen: …, onClose: …)`.
     * The middleware runs before the upgrade; onOpen sees the request and may refuse by throwing an HttpErrorException;
     * a request that is no WebSocket handshake gets 426 (400 for a bad key, 403 for an origin not allowed).
     *
     * @param WebSocketHandler|\Closure(Connection, Message): mixed $handler the handler, or its onMessage
     * @param (\Closure(Connection, Request): mixed)|null $onOpen with a closure $handler only
     * @param (\Closure(Connection, int, string): mixed)|null $onClose with a closure $handler only
     * @param list<string> $subprotocols offered, in the server's order of preference
     */
    public function ws(string $path, WebSocketHandler|\Closure $handler, ?\Closure $onOpen = null, ?\Closure $onClose = null, array $subprotocols = []): Route
    {
        return $this->add(['GET'], $path, $this->realtime->webSocketEndpoint($path, $handler, $onOpen, $onClose, array_values($subprotocols)));
    }

    /** @internal the worker's WebSocket server, set as it builds its server (an App on its own makes one) */
    public function configureWebSockets(WebSocketServer $server): void
    {
        $this->realtime->useServer($server); // Connection::join() puts a connection in this App's rooms
    }

    /**
     * A server-sent events endpoint on GET $path. Without a handler the stream follows the topic named by the
     * route's `{topic}` parameter. A handler gets the stream (not started yet) and the request's Context, and
     * may subscribe it to topics (`$app->hub()->subscribe($topic, $stream)`), send it events, watch onClose(),
     * refuse with an HttpErrorException, or return a Response to send instead of the stream. It runs before the stream
     * starts; the stream then holds no Fiber (docs/realtime.md).
     *
     * @param (\Closure(EventStream, Context): mixed)|null $handler
     */
    public function sse(string $path, ?\Closure $handler = null): Route
    {
        return $this->add(['GET'], $path, $this->realtime->sseEndpoint($path, $handler));
    }

    /** Sends an event to the SSE streams of a topic on every worker of the node; returns its id. */
    public function publish(string $topic, string $data, ?string $event = null): string
    {
        return $this->hub()->publish($topic, $data, $event);
    }

    /** Sends a message to every member of a room (WebSocket connections) on every worker of the node. */
    public function broadcast(string $room, string $message): void
    {
        $this->hub()->broadcast($room, $message);
    }

    /** The node's Store (NodeState::store()): every worker of the node sees the same keys. */
    public function store(): Store
    {
        return NodeState::store();
    }

    /** A Cache over the node's Store: TTLs, tags, remember() computed once for the whole node. */
    public function cache(): Cache
    {
        return $this->cache ??= new Cache($this->store(), near: NodeState::nearCache());
    }

    /** This node's id (NodeState::nodeId(): KILN_NODE_ID, else its supervisor's pid and start time). */
    public function nodeId(): string
    {
        return NodeState::nodeId();
    }

    /** The node-wide counter named $name (exact under concurrent workers). */
    public function counter(string $name): Counter
    {
        return new Counter($this->store(), $name);
    }

    /**
     * Sessions for every route (a `Session $session` handler parameter) through the Sessions middleware,
     * added here in the middleware order, and for session_start() in the sequential tier of site(): both
     * keep them in $store (default: the node's) under one cookie, so routes and classic scripts share them.
     */
    public function sessions(?Store $store = null, string $cookie = 'PHPSESSID', int $ttl = 1440, ?string $domain = null): self
    {
        if ($this->sessions !== null) {
            throw new \Error('sessions() is called once per App');
        }
        $this->sessions = new SessionStore($store ?? $this->store(), $ttl);
        return $this->middleware(new Sessions($this->sessions, $cookie, $domain));
    }

    /**
     * The app's own metrics: `$app->metrics()->counter('orders_total', 'Orders placed', ['kind'])->inc(1, 'book')`.
     * Recorded in this worker and served summed over the node's workers at the admin listener's /metrics
     * (--admin-listen); with no admin listener they are recorded for nobody (docs/design/024-metrics.md).
     */
    public function metrics(): Registry
    {
        return Registry::current();
    }

    /** This worker's rooms and topics, joined to the node's other workers through its bus. */
    public function hub(): Hub
    {
        return $this->realtime->hub();
    }

    /** @internal the server's limits (SSE replay), set by the worker before the first request */
    public function configureRealtime(Limits $limits): void
    {
        // Events that scripts publish (ScriptPublisher) are numbered by this worker's Hub as they reach its bus.
        $this->realtime->configure($limits);
    }

    /**
     * Runs $fn every $seconds in each worker, in a Fiber of its own; a run still going when the next is due skips
     * it. Timers start once the worker serves (after onWorkerStart) and end as it drains or stops; what they
     * throw is logged (docs/background.md).
     *
     * @param \Closure(): mixed $fn
     */
    public function every(float $seconds, \Closure $fn): Timer
    {
        return $this->schedule->add(new Timer($seconds, true, $fn));
    }

    /** @param \Closure(): mixed $fn run once, $seconds after the worker serves (or after this call, once it does) */
    public function after(float $seconds, \Closure $fn): Timer
    {
        return $this->schedule->add(new Timer($seconds, false, $fn));
    }

    /**
     * Runs $fn every $seconds on one worker of the node, named $name across workers and generations; when that
     * worker dies, is recycled or reloaded, another takes over (at once after an orderly stop, within ~5 s of a crash).
     *
     * @param \Closure(): mixed $fn
     */
    public function everyOnNode(string $name, float $seconds, \Closure $fn): Timer
    {
        return $this->schedule->add(new Timer($seconds, true, $fn, $name));
    }

    /**
     * Runs $fn once for the node, $seconds after its workers serve, on one worker of the node (the holder of the
     * timer's lease, named $name): a worker that dies first leaves it to another, and none runs it a second time,
     * replacements and reloads included, for as long as the node (its supervisor) runs.
     *
     * @param \Closure(): mixed $fn
     */
    public function afterOnNode(string $name, float $seconds, \Closure $fn): Timer
    {
        return $this->schedule->add(new Timer($seconds, false, $fn, $name));
    }

    /** @param \Closure(WorkerInfo): mixed $fn called in each worker (replacements too) once it serves; what it throws is logged */
    public function onWorkerStart(\Closure $fn): self
    {
        $this->schedule->onStart($fn);
        return $this;
    }

    /** @param \Closure(WorkerInfo): mixed $fn called as a worker ends in order: drained (recycle, reload, QUIT) or stopped (TERM) */
    public function onWorkerStop(\Closure $fn): self
    {
        $this->schedule->onStop($fn);
        return $this;
    }

    /** A task run by name in the task workers: `Kiln\App\task('resize', $path)` (docs/background.md). */
    public function task(string $name, \Closure $fn): self
    {
        $this->jobs->task($name, $fn);
        return $this;
    }

    /** @param \Closure(): mixed $fn a process the supervisor starts, starts again when it ends (backoff) and stops with the server */
    public function process(string $name, \Closure $fn): self
    {
        $this->jobs->process($name, $fn);
        return $this;
    }

    /** @internal the timers and hooks, run by the worker */
    public function schedule(): Schedule
    {
        return $this->schedule;
    }

    /** @internal the named tasks and user processes, for the background processes */
    public function background(): AppBackground
    {
        return $this->jobs;
    }

    /** @param list<string> $methods */
    public function route(array $methods, string $path, mixed $handler): Route
    {
        return $this->add($methods, $path, $handler);
    }

    /**
     * Routes under a common prefix, with middleware of their own (run after the global middleware).
     *
     * @param \Closure(RouteCollector): void $define
     * @param list<Middleware> $middleware
     */
    public function group(string $prefix, \Closure $define, array $middleware = []): self
    {
        $this->routes->group($prefix, $define, $middleware);
        return $this;
    }

    /** Global middleware, run for every request in the order added (also for 404s and 405s). */
    public function middleware(Middleware ...$middleware): self
    {
        array_push($this->middleware, ...array_values($middleware));
        $this->entry = null;
        return $this;
    }

    /** One endpoint per file: `DIR/users/list.php` answers `PREFIX/users/list`. */
    public function api(string $dir, string $prefix = '/api'): self
    {
        ApiRoutes::mount($this->routes, $dir, $prefix);
        return $this;
    }

    /**
     * Serves a document root for every path no route matches, as `kiln serve DIR` would: static files, and
     * `*.php` run by a tier — `$tier` for all of them (default: what `kiln serve --tier` picks), or the tier
     * given for the longest matching path prefix: `site(__DIR__ . '/public', ['/wp-admin/' => 'isolated'],
     * 'sequential')`. Routes keep answering their own paths on the coroutine tier; global middleware runs
     * for the site's requests too.
     *
     * `.htaccess` rules can be written here instead of in files: `$rules` maps a URL directory (`/`, `/blog/`) to
     * text in `.htaccess` syntax, applied as if it opened that directory's `.htaccess` (docs/htaccess.md).
     *
     * `$cacheControl` gives the static files' Cache-Control as `kiln serve --cache-control` does, one rule
     * each (`['/build/=public, max-age=31536000, immutable', '*.woff2,*.png=public, max-age=86400']`); they
     * are tried in order, before those of the command line, and the first that matches wins.
     *
     * @param array<string, string> $tiers URL path prefix => sequential | isolated | fork | fastcgi
     * @param array<string, string> $rules URL directory => `.htaccess` rules
     * @param list<string> $cacheControl `PATTERN[,PATTERN…]=CACHE-CONTROL`, a pattern `/path/prefix` or `*.ext`
     */
    public function site(string $root, array $tiers = [], ?string $tier = null, array $rules = [], array $cacheControl = []): self
    {
        $this->siteMount = SiteMount::checked($root, $tiers, $tier, $rules, array_values($cacheControl));
        $this->site = null;
        $this->entry = null;
        return $this;
    }

    /**
     * @internal the site() document root with the server's settings, built by the worker once the app is loaded
     * (so the php-cgi pool is asked for at boot); an app used on its own builds it with the defaults when first asked.
     * Returns whether the app has a document root (site()) to take the settings.
     */
    public function configureSite(SiteConfig $config): bool
    {
        if ($this->siteMount !== null) {
            $this->site = $this->siteMount->documentRoot($config, $this->sessions);
            $this->entry = null;
        }
        return $this->siteMount !== null;
    }

    /**
     * A custom error page for one status: gets (Request, \Throwable), returns what a handler would.
     *
     * @param \Closure(Request, \Throwable): mixed $handler
     */
    public function onError(int $status, \Closure $handler): self
    {
        $this->errors->onError($status, $handler);
        return $this;
    }

    /**
     * The path of a named route, with its parameters filled in.
     *
     * @param array<string, string|int|float> $params
     * @param array<string, mixed> $query
     */
    public function url(string $name, array $params = [], array $query = []): string
    {
        return $this->router->url($name, $params, $query);
    }

    /**
     * Logs a warning (once per worker) when a handler runs more than $seconds without yielding to the loop,
     * i.e. blocks every other request of its worker; null turns it off. On by default in debug mode
     * (BLOCKING_WARNING_SECONDS, to error_log()).
     *
     * @param (\Closure(string): void)|null $log default: error_log()
     */
    public function warnWhenBlocking(?float $seconds, ?\Closure $log = null): self
    {
        $log ??= static function (string $message): void {
            error_log("[kiln] warning: $message");
        };
        $this->blockingWatch = $seconds === null ? null : new BlockingWatch($seconds, $log);

        return $this;
    }

    public function handle(Request $request): Response
    {
        $watched = $this->blockingWatch?->start($request);
        try {
            $entry = $this->entry ??= $this->buildEntry();
            // The outermost middleware is called directly: a call less than through its link.
            $response = $entry instanceof MiddlewareHandler ? $entry->middleware->process($request, $entry->next) : $entry->handle($request);
            if ($watched !== null) {
                $watched();
            }

            return $response;
        } catch (\Throwable $error) {
            return $this->errors->uncaught($error, $request);
        }
    }

    /**
     * Serves this app: `php app.php [--listen=… --workers=…]` behaves as `kiln serve app.php …`.
     * Workers load the script afresh (so a reload picks up new code); there, run() only hands the App over.
     */
    public function run(): void
    {
        if (Handover::offer($this)) {
            return;
        }
        $file = $_SERVER['SCRIPT_FILENAME'] ?? '';
        $script = \is_string($file) ? realpath($file) : false;
        if ($script === false) {
            throw new \Error('App::run() is for `php app.php`; use `kiln serve app.php` otherwise');
        }
        /** @var list<string> $argv */
        $argv = $_SERVER['argv'] ?? [];
        $kiln = \dirname(__DIR__, 2) . '/bin/kiln';
        pcntl_exec(PHP_BINARY, [$kiln, 'serve', $script, ...\array_slice($argv, 1)]);
        throw new \Error('Cannot start ' . $kiln . ': ' . pcntl_strerror(pcntl_get_last_error()));
    }

    /**
     * @internal used by the worker: loads an app script in this process and returns what it serves: the App it
     * returns or hands over with run(), or any RequestHandler it returns (the bare engine, with no routing)
     */
    public static function load(string $script): RequestHandler
    {
        return Handover::load($script);
    }

    private function buildEntry(): RequestHandler
    {
        if ($this->siteMount !== null && $this->site === null) {
            $this->configureSite(SiteConfig::create());
        }
        return MiddlewareHandler::chain($this->middleware, new Dispatcher($this->router, $this, $this->invoker, $this->site));
    }

    /** @param list<string> $methods */
    private function add(array $methods, string $path, mixed $handler): Route
    {
        $this->invoker->resolve($handler);
        return $this->routes->route($methods, $path, $handler);
    }
}
