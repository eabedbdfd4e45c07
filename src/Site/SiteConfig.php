<?php

declare(strict_types=1);

namespace Kiln\Site;

use Kiln\Http\ForwardedHeaders;
use Kiln\Http\Static\CachePolicy;

/**
 * How a document root runs its scripts: the tier and each tier's settings (`kiln serve --tier=…`).
 * create() checks every value and throws \ValueError with a message naming the option; it looks for
 * php-cgi in the search path, so `auto` can pick the isolated tier when PHP's own CGI binary is there.
 */
final class SiteConfig
{
    public const TIERS = ['auto', 'sequential', 'isolated', 'fork', 'fastcgi'];

    /**
     * @param array<string, string> $phpIni
     * @param list<string> $passEnv
     * @param array<string, string> $fastcgiMap
     * @param list<string> $cacheControl
     * @param list<string> $trustedProxies
     */
    private function __construct(
        /** The tier that runs scripts (auto already resolved). */
        public readonly Tier $tier,
        /** As asked: `auto` or a tier name. */
        public readonly string $requestedTier,
        /** Seconds a script may run before the request gets a 504 (every tier); 0: no limit. */
        public readonly float $timeLimit,
        /** php-cgi children per worker (isolated tier). */
        public readonly int $poolSize,
        /** Requests a php-cgi child serves before Kiln replaces it. */
        public readonly int $poolMaxRequests,
        /** Requests waiting for a free child before new ones get 503 + Retry-After. */
        public readonly int $poolQueue,
        /** Absolute path of the php-cgi binary, null when none was found. */
        public readonly ?string $phpCgi,
        /** php.ini overrides for the script tiers: name => value. */
        public readonly array $phpIni,
        /** Environment variables passed through to scripts (php-cgi, CGI, fork). */
        public readonly array $passEnv,
        /** The FastCGI upstream of the fastcgi tier: `host:port` or `unix:/absolute/path`. */
        public readonly ?string $fastcgi,
        /** Extension (`.py`) => FastCGI address: such files are scripts, run by that upstream. */
        public readonly array $fastcgiMap,
        /** Absolute directory served at /cgi-bin/ (CGI tier), null: none. */
        public readonly ?string $cgiBin,
        /** Forked children running at once (fork tier) before new requests get 503. */
        public readonly int $forkMax,
        /** URL path of the script for paths no file matches; null: 404 instead. */
        public readonly ?string $frontController,
        /** Whether the document root reads Apache `.htaccess` files (`--no-htaccess` turns it off). */
        public readonly bool $htaccess = true,
        /** Whether the php-cgi children run the tracing JIT where --php-ini does not set it (`--pool-jit`). */
        public readonly bool $poolJit = false,
        /** Cache-Control rules for static files, as CachePolicy::withRule() reads them, first match wins (`--cache-control`). */
        public readonly array $cacheControl = [],
        /** Addresses or CIDRs of the reverse proxies whose forwarded headers are believed (`--trusted-proxies`). */
        public readonly array $trustedProxies = [],
        /** Which symlinks out of the document root are followed (`--symlinks`). */
        public readonly SymlinkPolicy $symlinks = SymlinkPolicy::Inside,
        /** Where session_start() in the sequential tier keeps sessions (App::sessions()); null: PHP's own setting. */
        public readonly ?\SessionHandlerInterface $sessionHandler = null,
        /** `--dev`: the sequential tier reports what each script leaves behind for the next request (DevReport). */
        public readonly bool $dev = false,
        /** Most requests one connection to the php-cgi children carries back to back (`--pool-reuse`; 1: one each). */
        public readonly int $poolReuse = 16,
        /** Whether the php-cgi children run as batch jobs, SCHED_BATCH (`--pool-sched=batch`; `normal`, the default: the server's own policy). */
        public readonly bool $poolBatch = false,
    ) {}

    /**
     * @param array<string, string> $phpIni name => value
     * @param list<string> $passEnv
     * @param array<string, string> $fastcgiMap `.py` (dot optional) => address
     * @param ?string $searchPath where to look for php-cgi (PATH syntax); null: this process's PATH
     * @param string $cwd relative paths (--php-cgi, --cgi-bin, unix: addresses) are taken from here
     * @param list<string> $cacheControl `PATTERN[,PATTERN…]=CACHE-CONTROL` rules (CachePolicy::withRule())
     * @param list<string> $trustedProxies addresses or CIDRs (ForwardedHeaders)
     * @throws \ValueError
     */
    public static function create(
        string $tier = 'auto',
        float $timeLimit = 30.0,
        int $poolSize = 4,
        int $poolMaxRequests = 10_000,
        int $poolQueue = 512,
        ?string $phpCgi = null,
        array $phpIni = [],
        array $passEnv = [],
        ?string $fastcgi = null,
        array $fastcgiMap = [],
        ?string $cgiBin = null,
        int $forkMax = 8,
        ?string $frontController = '/index.php',
        ?string $searchPath = null,
        string $cwd = '/',
        bool $htaccess = true,
        bool $poolJit = false,
        array $cacheControl = [],
        array $trustedProxies = [],
        SymlinkPolicy $symlinks = SymlinkPolicy::Inside,
        bool $dev = false,
        int $poolReuse = 16,
        bool $poolBatch = false,
    ): self {
        $cwd = rtrim($cwd, '/');
        $searchPath ??= (string) getenv('PATH');
        if (!\in_array($tier, self::TIERS, true)) {
            throw new \ValueError('--tier must be one of ' . implode(', ', self::TIERS) . ", got '$tier'");
        }
        if (is_nan($timeLimit) || $timeLimit < 0) {
            throw new \ValueError("--time-limit must be a number of seconds (0: none), got $timeLimit");
        }
        self::range('--pool-size', $poolSize, 1, 1024);
        self::range('--pool-max-requests', $poolMaxRequests, 1, PHP_INT_MAX);
        self::range('--pool-queue', $poolQueue, 0, 1_000_000);
        self::range('--pool-reuse', $poolReuse, 1, 1_000_000);
        self::range('--fork-max', $forkMax, 1, 4096);
        $phpCgi = $phpCgi === null ? self::findPhpCgi($searchPath) : self::executable($phpCgi, $searchPath, $cwd);
        foreach ($phpIni as $name => $value) {
            if (preg_match('/^[A-Za-z0-9_.\-]+$/', $name) !== 1 || preg_match('/[\r\n\0]/', $value) === 1) {
                throw new \ValueError("--php-ini must be NAME=VALUE with an ini directive name and a one-line value, got '$name=$value'");
            }
        }
        foreach ($passEnv as $name) {
            if (preg_match('/^[A-Za-z_][A-Za-z0-9_]*$/', $name) !== 1) {
                throw new \ValueError("--pass-env must be an environment variable name, got '$name'");
            }
        }
        $fastcgi = $fastcgi === null ? null : self::address('--fastcgi', $fastcgi, $cwd);
        $map = [];
        foreach ($fastcgiMap as $extension => $address) {
            $extension = str_starts_with($extension, '.') ? $extension : '.' . $extension;
            if (preg_match('/^\.[A-Za-z0-9_]+$/', $extension) !== 1) {
                throw new \ValueError("--fastcgi-map must be EXT=ADDR with an extension such as .py, got '$extension'");
            }
            $map[$extension] = self::address('--fastcgi-map', $address, $cwd);
        }
        if ($cgiBin !== null) {
            $real = realpath(str_starts_with($cgiBin, '/') ? $cgiBin : "$cwd/$cgiBin");
            if ($real === false || !is_dir($real)) {
                throw new \ValueError("--cgi-bin must be an existing directory, got '$cgiBin'");
            }
            $cgiBin = $real;
        }
        if ($frontController !== null && (!str_starts_with($frontController, '/') || str_ends_with($frontController, '/')
            || \in_array('..', explode('/', $frontController), true))) {
            throw new \ValueError("--front-controller must be a URL path such as /index.php (or off), got '$frontController'");
        }
        self::policy($cacheControl, '--cache-control');
        try {
            new ForwardedHeaders($trustedProxies);
        } catch (\ValueError $e) {
            throw new \ValueError('--trusted-proxies: ' . $e->getMessage(), 0, $e);
        }
        $resolved = match ($tier) {
            'auto' => $fastcgi !== null ? Tier::FastCgi : ($phpCgi !== null ? Tier::Isolated : Tier::Sequential),
            default => Tier::from($tier),
        };
        if ($resolved === Tier::Isolated && $phpCgi === null) {
            throw new \ValueError('--tier=isolated needs php-cgi, which is not in PATH: install it (apt-get install php8.2-cgi) or give --php-cgi=PATH');
        }
        if ($resolved === Tier::FastCgi && $fastcgi === null) {
            throw new \ValueError('--tier=fastcgi needs the upstream address: --fastcgi=HOST:PORT or --fastcgi=unix:/path/to.sock');
        }
        return new self(
            $resolved,
            $tier,
            $timeLimit,
            $poolSize,
            $poolMaxRequests,
            $poolQueue,
            $phpCgi,
            $phpIni,
            $passEnv,
            $fastcgi,
            $map,
            $cgiBin,
            $forkMax,
            $frontController,
            $htaccess,
            $poolJit,
            $cacheControl,
            $trustedProxies,
            $symlinks,
            null,
            $dev,
            $poolReuse,
            $poolBatch,
        );
    }

    /**
     * The same settings with another tier for the document root's scripts (an app's `site()` may name
     * one). The checks create() makes for that tier hold here too.
     *
     * @throws \ValueError
     */
    public function withTier(Tier $tier): self
    {
        if ($tier === Tier::Isolated && $this->phpCgi === null) {
            throw new \ValueError('The isolated tier needs php-cgi, which is not in PATH: install it (apt-get install php8.2-cgi) or give --php-cgi=PATH');
        }
        if ($tier === Tier::FastCgi && $this->fastcgi === null) {
            throw new \ValueError('The fastcgi tier needs the upstream address: --fastcgi=HOST:PORT or --fastcgi=unix:/path/to.sock');
        }
        return $this->rebuild($tier, $tier->value, $this->sessionHandler);
    }

    /**
     * The start-up warning when a script may hold the worker's event loop past --stall-timeout: the sequential
     * tier runs scripts on the loop, for up to --time-limit (docs/design/028). Null when the limit ends a
     * script first, the stall timeout is off, or the tier runs scripts elsewhere.
     */
    public function stallTimeoutWarning(float $stallTimeout): ?string
    {
        if ($this->tier !== Tier::Sequential || $stallTimeout <= 0 || ($this->timeLimit > 0 && $this->timeLimit < $stallTimeout)) {
            return null;
        }
        $limit = $this->timeLimit > 0 ? "--time-limit=$this->timeLimit is not below --stall-timeout=$stallTimeout" : "--time-limit=0 (none) with --stall-timeout=$stallTimeout";
        return "$limit: the sequential tier runs scripts on the worker's event loop, so a script running past $stallTimeout s is taken for a stuck loop"
            . ' (its sleep or wait is cut short by the report) and its worker killed at twice that, with every request it holds;'
            . ' set --time-limit below --stall-timeout, or raise --stall-timeout (0: off)';
    }

    /** The same settings, with session_start() in the sequential tier keeping sessions through $handler. */
    public function withSessionHandler(\SessionHandlerInterface $handler): self
    {
        return $this->rebuild($this->tier, $this->requestedTier, $handler);
    }

    private function rebuild(Tier $tier, string $requestedTier, ?\SessionHandlerInterface $sessionHandler): self
    {
        return new self(
            $tier,
            $requestedTier,
            $this->timeLimit,
            $this->poolSize,
            $this->poolMaxRequests,
            $this->poolQueue,
            $this->phpCgi,
            $this->phpIni,
            $this->passEnv,
            $this->fastcgi,
            $this->fastcgiMap,
            $this->cgiBin,
            $this->forkMax,
            $this->frontController,
            $this->htaccess,
            $this->poolJit,
            $this->cacheControl,
            $this->trustedProxies,
            $this->symlinks,
            $sessionHandler,
            $this->dev,
            $this->poolReuse,
            $this->poolBatch,
        );
    }

    /**
     * The static files' Cache-Control: the rules of $first (an app's `site()`), then the site's own.
     *
     * @param list<string> $first
     * @throws \ValueError
     */
    public function cachePolicy(array $first = []): CachePolicy
    {
        return self::policy([...$first, ...$this->cacheControl], '--cache-control');
    }

    /**
     * @param list<string> $rules
     * @throws \ValueError naming $option and the rule
     */
    public static function policy(array $rules, string $option): CachePolicy
    {
        $policy = CachePolicy::none();
        foreach ($rules as $rule) {
            try {
                $policy = $policy->withRule($rule);
            } catch (\ValueError $e) {
                throw new \ValueError("$option: " . $e->getMessage(), 0, $e);
            }
        }
        return $policy;
    }

    /** A FastCGI address as a stream_socket_client() URI: `tcp://host:port` or `unix:///path`. */
    public static function socketUri(string $address): string
    {
        return str_starts_with($address, 'unix:') ? 'unix://' . substr($address, 5) : 'tcp://' . $address;
    }

    /**
     * Script extensions of the document root: `.php` and each mapped one.
     *
     * @return list<string>
     */
    public function scriptExtensions(): array
    {
        return array_values(array_unique(['.php', ...array_keys($this->fastcgiMap)]));
    }

    private static function range(string $option, int $value, int $min, int $max): void
    {
        if ($value < $min || $value > $max) {
            throw new \ValueError($max === PHP_INT_MAX ? "$option must be at least $min, got $value" : "$option must be between $min and $max, got $value");
        }
    }

    private static function address(string $option, string $address, string $cwd): string
    {
        if (str_starts_with($address, 'unix:')) {
            $path = preg_replace('~^unix:(//)?~', '', $address) ?? '';
            if ($path === '' || str_contains($path, "\0")) {
                throw new \ValueError("$option: a unix socket address is unix:/path/to.sock, got '$address'");
            }
            return 'unix:' . (str_starts_with($path, '/') ? $path : "$cwd/$path");
        }
        $hostPort = str_starts_with($address, 'tcp://') ? substr($address, 6) : $address;
        if (preg_match('/^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9][A-Za-z0-9.\-]*):(\d{1,5})$/', $hostPort, $m) !== 1
            || (int) $m[2] < 1 || (int) $m[2] > 65535) {
            throw new \ValueError("$option must be HOST:PORT or unix:/path/to.sock, got '$address'");
        }
        return $hostPort;
    }

    private static function findPhpCgi(string $searchPath): ?string
    {
        foreach (['php-cgi', 'php-cgi' . PHP_MAJOR_VERSION . '.' . PHP_MINOR_VERSION] as $name) {
            foreach (explode(':', $searchPath) as $dir) {
                if ($dir !== '' && is_file("$dir/$name") && is_executable("$dir/$name")) {
                    return "$dir/$name";
                }
            }
        }
        return null;
    }

    private static function executable(string $path, string $searchPath, string $cwd): string
    {
        if (!str_contains($path, '/')) {
            foreach (explode(':', $searchPath) as $dir) {
                if ($dir !== '' && is_file("$dir/$path") && is_executable("$dir/$path")) {
                    return "$dir/$path";
                }
            }
            throw new \ValueError("--php-cgi: '$path' is not in PATH; give the binary's path");
        }
        $absolute = str_starts_with($path, '/') ? $path : "$cwd/$path";
        if (!is_file($absolute) || !is_executable($absolute)) {
            throw new \ValueError("--php-cgi must be an executable file, got '$path'");
        }
        return $absolute;
    }
}
