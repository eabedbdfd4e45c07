<?php

declare(strict_types=1);

namespace Kiln\Cli;

/**
 * The help texts: `kiln help` shows them all; `kiln COMMAND --help` (or -h) that command's usage, and for serve its
 * options. Each serve option is listed here, so that none exists only in the docs (HelpTest).
 */
final class Help
{
    public const COMMANDS = ['serve', 'stop', 'reload', 'status'];

    private const INTRO = <<<'TEXT'
        Kiln — a PHP application server.

        TEXT;
    private const SERVE = <<<'TEXT'
          kiln serve PATH [options]   serve an app script, a directory holding app.php, or a document root

        TEXT;
    private const STOP = <<<'TEXT'
          kiln stop [--graceful] [--timeout=S] [--pid-file=F | --listen=HOST:PORT]
                                    stop the server: TERM, or with --graceful QUIT (in-flight requests finish, up to
                                    --drain-timeout); waits for it to exit, up to --timeout seconds (default 15; 60 graceful)

        TEXT;
    private const RELOAD = <<<'TEXT'
          kiln reload [--pid-file=F | --listen=HOST:PORT]    start new workers with fresh code (SIGHUP)

        TEXT;
    private const STATUS = <<<'TEXT'
          kiln status [--json] [--watch] [--pid-file=F | --listen=HOST:PORT]
                                    --watch: redrawn every second; with --json, one JSON object a line every second

        TEXT;
    private const OTHER = <<<'TEXT'
          kiln help | --help        this text
          kiln --version

        TEXT;
    private const SERVE_OPTIONS = <<<'TEXT'
        serve options (each also from env KILN_NAME, e.g. KILN_WORKERS=4; the command line wins):
          --listen=HOST:PORT        address to listen on, repeatable (default 127.0.0.1:8080; port 0 = any free port)
          --workers=N               worker processes (default: CPU count)
          --daemon                  run in the background (error log defaults to the pid file's path with .log)
          --dev                     development: report what each sequential-tier script leaves for the next request;
                        the workers run opcache without the JIT (unless --jit=on)
          --watch                   development: reload the workers when the app's PHP files change (docs/development.md)
          --pid-file=FILE           default: kiln-HOST-PORT.pid in the system temp dir
          --max-requests=N          replace a worker after N requests (default 0 = never; --max-memory guards leaks)
          --max-memory=SIZE         replace a worker above SIZE, e.g. 128M (default 256M, 0 = never)
          --memory-limit=SIZE       PHP's memory_limit for every process: a request past it gets 500 and its worker
                        is replaced (default: PHP's own, else 4 x --max-memory = 1G; -1 = none)
          --drain-timeout=SECONDS   how long a graceful stop waits for in-flight requests (default 30)
          --task-workers=N          processes for blocking or CPU-heavy task() calls (default 0 = none)
          --task-queue=N            task calls that may wait for a task worker, node-wide (default 64; past it: 503)
          --task-timeout=SECONDS    a task call's time limit, queue wait included (default 60)
          --access-log=FILE|-|off   access log (default off; - = stderr)
          --access-log-format=combined|json  the access log's lines: Apache's combined format (default) or one
                                    JSON object per request (time, method, path, status, bytes, duration, client,
                                    request_id, tier, worker)
          --admin-listen=HOST:PORT  serve /metrics (Prometheus), /health and /ready there (default off; loopback
                                    only unless --admin-public; never the --listen address)
          --admin-public            allow --admin-listen on an address other than loopback
          --slow-request=SECONDS    log a warning for each request slower than this (default 0 = off)
          --stall-timeout=SECONDS   a worker whose event loop stands still this long (a handler blocking it) is
                                    logged with its stack, and ended at twice it (default 60, 0 = off;
                                    off under --dev or Xdebug's step debugger unless given)
          --error-log-format=text|json  the error log as text lines (default) or one JSON object per line
          --error-log=FILE|-        error log (default - = stderr)
          --log-level=LEVEL         debug, info, warning or error (default info)
          --driver=auto|select|epoll  event loop driver (default auto)
          --connections=N           open connections per worker (default 10000 with the epoll driver, 512 with select;
                        select watches at most 960)
          --listener=shared|reuseport  one shared listening socket (default) or one per worker
          --jit=on|off              opcache + tracing JIT in the workers (default on; with --dev, opcache alone)
          --limit-NAME=VALUE        an HTTP limit, e.g. --limit-header-timeout=5, --limit-body-size=1048576,
                                    --limit-ws-message-bytes=65536 (docs/configuration.md lists them all)
          --trusted-proxies=LIST    reverse proxies (addresses, CIDRs: 127.0.0.1,10.0.0.0/8) whose Forwarded /
                                    X-Forwarded-* headers give the client address, HTTPS and SERVER_PORT (default none)
          --ws-deflate              offer permessage-deflate to WebSocket clients (default off)
          --ws-origins=LIST         origins allowed to open WebSockets, e.g. https://example.com (default any)
          --redis=URI               share the node bus (rooms, topics, publish) with every node on this Redis:
                                    redis://[user:pass@]host:port[/db], rediss:// for TLS (default: node only)
          --redis-sentinel=HOSTS/MASTER  the same through Sentinel (host:26379,host2:26379/mymaster)
          --redis-cluster=HOSTS     the same on a Redis Cluster (host:7000,host2:7001)
          --redis-cache-ttl=SECONDS  how long a node keeps its copy of a cache entry read from Redis; a change
                                    made elsewhere drops it at once, this bounds a lost invalidation (default 5)

        TEXT;
    private const DOCUMENT_ROOT_OPTIONS = <<<'TEXT'
        document root options (PATH without app.php; docs/configuration.md):
          --tier=auto|sequential|isolated|fork|fastcgi  what runs *.php (default auto: isolated when php-cgi
                                    is found, fastcgi with --fastcgi, else sequential)
          --time-limit=SECONDS      a script running longer gets 504 (default 30, 0 = none)
          --front-controller=PATH|off  the script for paths no file matches (default /index.php)
          --no-htaccess             ignore .htaccess files (default: read them)
          --symlinks=inside|owner|follow  symlinks out of the root: never followed (default), when
                                    link and target have one owner, or always
          --pool-size=N             php-cgi children of the server, isolated tier (default 4)
          --pool-max-requests=N     requests a php-cgi child serves before it is replaced (default 10000)
          --pool-queue=N            requests per worker waiting for a child before 503 (default 512)
          --pool-jit=on|off         the tracing JIT in the php-cgi children (default off, as under php-fpm)
          --pool-reuse=N            requests one connection to the children carries back to back (default 16)
          --pool-sched=normal|batch  the children's scheduling policy (default normal; batch: a woken child
                                    never preempts a worker: more requests a second for light pages under load)
          --php-cgi=PATH            the php-cgi binary (default: php-cgi from PATH)
          --php-ini=NAME=VALUE      a php.ini setting for scripts, repeatable
          --pass-env=NAME           an environment variable passed to script processes, repeatable
          --fastcgi=ADDR            an existing FastCGI responder: HOST:PORT or unix:/path.sock
          --fastcgi-map=EXT=ADDR    files ending in EXT go to that responder, repeatable (.py=127.0.0.1:9001)
          --cgi-bin=DIR             executables under DIR answer at /cgi-bin/ as CGI
          --fork-max=N              forked children at once, fork tier (default 8)
          --cache-control=PATTERNS=VALUE  Cache-Control for static files, repeatable, first match wins; PATTERNS
                                    are /path/prefixes and *.ext, comma-separated (default: none sent), e.g.
                                    --cache-control='/build/=public, max-age=31536000, immutable'

        TEXT;
    private const SIGNALS = <<<'TEXT'
        Signals to the supervisor: TERM/INT stop, QUIT graceful stop, HUP reload, USR1 reopen logs.

        TEXT;
    private const CONTROL = <<<'TEXT'
        stop, reload and status act only on a process that is Kiln's supervisor (its title is "kiln: supervisor"):
        a pid file naming any other process is stale, and counts as "not running" (exit 1; status: 3).
        `kiln serve` replaces a stale pid file.

        TEXT;

    /** Everything: `kiln help`. */
    public static function all(): string
    {
        return self::INTRO . "\nUsage:\n" . self::SERVE . self::STOP . self::RELOAD . self::STATUS . self::OTHER
            . "\n" . self::SERVE_OPTIONS . "\n" . self::DOCUMENT_ROOT_OPTIONS . "\n" . self::SIGNALS . self::CONTROL;
    }

    /** One command's: `kiln serve --help`. @throws \ValueError for a command not in COMMANDS */
    public static function of(string $command): string
    {
        return "Usage:\n" . match ($command) {
            'serve' => self::SERVE . "\n" . self::SERVE_OPTIONS . "\n" . self::DOCUMENT_ROOT_OPTIONS . "\n" . self::SIGNALS,
            'stop' => self::STOP . "\n" . self::CONTROL,
            'reload' => self::RELOAD . "\n" . self::CONTROL,
            'status' => self::STATUS . "\n" . self::CONTROL,
            default => throw new \ValueError("no command $command; one of " . implode(', ', self::COMMANDS)),
        };
    }

    /**
     * Whether a command's arguments ask for its help: --help or -h before any `--`.
     *
     * @param list<string> $args
     */
    public static function asked(array $args): bool
    {
        foreach ($args as $arg) {
            if ($arg === '--') {
                return false;
            }
            if ($arg === '--help' || $arg === '-h') {
                return true;
            }
        }
        return false;
    }
}
