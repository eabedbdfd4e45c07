<?php

declare(strict_types=1);

namespace Kiln\Site\Htaccess;

/**
 * Apache's .htaccess handling (AllowOverride All) for a document root, as a function of a request: the
 * files from the root down to the deepest existing directory of the path apply; access rules are checked,
 * then the rewrite rules of the closest file that has any run (per-directory semantics), and an internal
 * rewrite starts the whole check again for the new path, at most `$maxRounds` times (then 500), as
 * Apache's LimitInternalRecursion. The document root calls forRequest() for each request it would serve
 * from the file system, and forTarget() when it then picks another file (a directory index, `page` →
 * `page.php`) to check access and settings for that file. Call takeWarnings() after each and log them.
 */
final class HtaccessRules
{
    /** Paths remembered by untouched(), either answer; the oldest dropped first. */
    private const MAX_UNTOUCHED = 10_000;

    private readonly string $root;

    private readonly ConfigCache $cache;

    private readonly Rewriter $rewriter;

    /** @var ?\Closure(): float null: microtime(true), called directly (untouched() runs for every request) */
    private readonly ?\Closure $clock;

    private readonly float $recheck;

    /**
     * @var array<string, array{bool, float}> raw path => untouched()'s answer, and when the oldest directory entry
     * it rests on was checked
     */
    private array $answers = [];

    /** @param ?\Closure(): float $clock for the once-a-second re-check of each file (tests pass a fake) */
    public function __construct(
        string $root,
        private readonly Filesystem $files = new LocalFilesystem(),
        ?\Closure $clock = null,
        private readonly int $maxRounds = 10,
        string $fileName = '.htaccess',
    ) {
        if ($root === '' || $root[0] !== '/') {
            throw new \ValueError("Document root must be an absolute path, got '$root'");
        }
        $this->root = rtrim($root, '/');
        $this->clock = $clock;
        $this->cache = new ConfigCache($files, $clock, $fileName);
        $this->rewriter = new Rewriter($files);
        $this->recheck = $this->cache->recheck();
    }

    /**
     * Whether no .htaccess file applies to this path: every directory on it has none, or an empty one.
     * Then forRequest() and forTarget() would change nothing, and the document root can serve the path as
     * without .htaccess support. Either answer is remembered per path for as long as the directory checks it rests on stay
     * fresh, so the common case costs one look-up. False for a malformed path (forRequest() leaves it to
     * the document root) and when a file just parsed has warnings (forRequest() then reports them).
     *
     * @param bool $encoded $path is raw, as on the request line (else decoded, as a Script's scriptName)
     */
    public function untouched(string $path, bool $encoded = true): bool
    {
        $now = $this->clock === null ? microtime(true) : ($this->clock)();
        $key = $encoded ? $path : "\0$path";
        [$answer, $checked] = $this->answers[$key] ?? [false, null];
        if ($checked !== null && $now - $checked < $this->recheck && $now >= $checked) {
            return $answer;
        }
        unset($this->answers[$key]);
        $normal = self::normalize($path, $encoded);
        if ($normal === null) {
            return false;
        }
        $this->cache->takeOldest();
        [$configs] = $this->map($normal);
        $oldest = $this->cache->takeOldest();
        $answer = !$this->cache->hasWarnings();
        foreach ($configs as $config) {
            $answer = $answer && $config->blank;
        }
        if (\count($this->answers) >= self::MAX_UNTOUCHED) {
            unset($this->answers[array_key_first($this->answers)]);
        }
        $this->answers[$key] = [$answer, $oldest];
        return $answer;
    }

    public function forRequest(RequestFacts $request): Outcome
    {
        $path = self::normalize($request->path, true);
        if ($path === null) {
            return new Outcome(Verdict::Proceed, $request->path, $request->query, new Settings(), reason: 'malformed path: left to the document root');
        }
        $query = $request->query;
        $env = [];
        $type = null;
        $end = false;
        $rewritten = false;
        for ($round = 0; ; $round++) {
            [$configs, $filename, $pathInfo] = $this->map($path);
            $settings = self::settings($configs, $filename);
            if (!$settings->allows($request->remoteAddress, $request->method, $env)) {
                return new Outcome(Verdict::Refuse, $path, $query, $settings, status: 403, reason: "access denied to $path");
            }
            $set = $end ? null : self::rewriteSet($configs);
            if ($set === null || !$set->enabled()) {
                break;
            }
            $vars = new Variables($request, $this->root, $path, $query, $filename, $pathInfo, $env);
            $result = $this->rewriter->run($set, $vars, $path, $query, $request->host());
            $env = $vars->env;
            $type = $result->type ?? $type;
            if ($result->location !== null) {
                return new Outcome(Verdict::Redirect, $path, $result->query, $settings, $env, $result->status, $result->location, reason: 'RewriteRule [R]');
            }
            if ($result->status !== 0) {
                return new Outcome(Verdict::Refuse, $path, $query, $settings, $env, $result->status, reason: 'RewriteRule [F], [G] or [R=4xx]');
            }
            $query = $result->query;
            $next = $result->path === null ? null : self::normalize($result->path, false);
            if ($result->path !== null && $next === null) {
                return new Outcome(Verdict::Refuse, $path, $query, $settings, $env, 400, reason: "rewritten to a path above the root: {$result->path}");
            }
            if ($next === null || $next === $path) {
                break;
            }
            if ($round + 1 > $this->maxRounds) {
                return new Outcome(Verdict::Refuse, $path, $query, $settings, $env, 500, reason: "more than {$this->maxRounds} internal rewrites (a rewrite loop?)");
            }
            $env = self::redirectEnv($env + $settings->env, $path, $query);
            [$path, $end, $rewritten] = [$next, $result->end, true];
        }
        $raw = $rewritten ? implode('/', array_map('rawurlencode', explode('/', $path))) : $request->path;
        return new Outcome(Verdict::Proceed, $raw, $query, $settings, array_merge($env, $settings->env), rewritten: $rewritten, type: $type);
    }

    /**
     * Access and settings for the file the document root finally serves, when it is not the path
     * forRequest() returned (`/blog/` → `/blog/index.php`). No rewriting.
     *
     * @param string $urlPath decoded URL path of that file (a Script's scriptName)
     * @param array<string, string> $env the env of the forRequest() outcome
     */
    public function forTarget(RequestFacts $request, string $urlPath, array $env = []): Outcome
    {
        $path = self::normalize($urlPath, false) ?? '/';
        [$configs, $filename] = $this->map($path);
        $settings = self::settings($configs, $filename);
        if (!$settings->allows($request->remoteAddress, $request->method, $env)) {
            return new Outcome(Verdict::Refuse, $urlPath, $request->query, $settings, $env, 403, reason: "access denied to $path");
        }
        return new Outcome(Verdict::Proceed, $urlPath, $request->query, $settings, array_merge($env, $settings->env));
    }

    /**
     * Warnings from the .htaccess files parsed since the last call (each parse reports once).
     *
     * @return list<Warning>
     */
    public function takeWarnings(): array
    {
        return $this->cache->takeWarnings();
    }

    /**
     * The configs of the root and each existing directory on the path, the file name the path maps to (up
     * to the first part that is not a directory) and the rest (PATH_INFO).
     *
     * @return array{list<DirectoryConfig>, string, string}
     */
    private function map(string $path): array
    {
        $configs = [$this->cache->directory($this->root, '/') ?? DirectoryConfig::empty()];
        $segments = explode('/', substr($path, 1));
        $slash = end($segments) === '';
        if ($slash) {
            array_pop($segments);
        }
        $dir = $this->root;
        $url = '/';
        foreach ($segments as $i => $segment) {
            $config = $this->cache->directory("$dir/$segment", "$url$segment/");
            if ($config === null) {
                $rest = \array_slice($segments, $i + 1);
                $pathInfo = $rest === [] ? ($slash ? '/' : '') : '/' . implode('/', $rest) . ($slash ? '/' : '');
                return [$configs, "$dir/$segment", $pathInfo];
            }
            $configs[] = $config;
            $dir .= "/$segment";
            $url .= "$segment/";
        }
        return [$configs, $dir . ($slash || $segments === [] ? '/' : ''), ''];
    }

    /** @param list<DirectoryConfig> $configs */
    private static function settings(array $configs, string $filename): Settings
    {
        $settings = null;
        $files = false;
        foreach ($configs as $config) {
            if (!$config->blank) {
                $settings = $settings === null ? $config->settings : $settings->merge($config->settings);
                $files = $files || $config->files !== [];
            }
        }
        $settings ??= $configs[0]->settings;
        if (!$files) {
            return $settings;
        }
        $baseName = substr($filename, (int) strrpos($filename, '/') + 1);
        foreach ($configs as $config) {
            foreach ($config->files as [$matchers, $section]) {
                foreach ($matchers as $matcher) {
                    if (!$matcher->matches($baseName)) {
                        continue 2;
                    }
                }
                $settings = $settings->merge($section);
            }
        }
        return $settings;
    }

    /** @param list<DirectoryConfig> $configs */
    private static function rewriteSet(array $configs): ?RewriteSet
    {
        $set = null;
        foreach ($configs as $config) {
            if ($config->rewrite !== null) {
                $set = $set === null ? $config->rewrite : $set->merge($config->rewrite);
            }
        }
        return $set;
    }

    /**
     * Apache's internal redirect: the variables so far get a REDIRECT_ prefix, plus the old URL and query.
     *
     * @param array<string, string> $env
     * @return array<string, string>
     */
    private static function redirectEnv(array $env, string $path, string $query): array
    {
        $next = ['REDIRECT_STATUS' => '200', 'REDIRECT_URL' => $path];
        if ($query !== '') {
            $next['REDIRECT_QUERY_STRING'] = $query;
        }
        foreach ($env as $name => $value) {
            $next['REDIRECT_' . $name] ??= $value;
        }
        return $next;
    }

    /**
     * Decoded, `.`/`..` and repeated slashes resolved, trailing slash kept; null when malformed (as the
     * document root refuses it) or above the root.
     */
    private static function normalize(string $path, bool $encoded): ?string
    {
        if ($path === '' || $path[0] !== '/') {
            return null;
        }
        if ($encoded) {
            if (preg_match('/%(?![0-9A-Fa-f]{2})|%2f|%5c|%00/i', $path) === 1) {
                return null;
            }
            $path = rawurldecode($path);
        }
        if (preg_match('/[\x00-\x1F\x7F\\\\]/', $path) === 1) {
            return null;
        }
        $segments = [];
        $parts = explode('/', substr($path, 1));
        foreach ($parts as $part) {
            if ($part === '..') {
                if (array_pop($segments) === null) {
                    return null;
                }
            } elseif ($part !== '' && $part !== '.') {
                $segments[] = $part;
            }
        }
        $last = $parts[\count($parts) - 1];
        $slash = $segments !== [] && ($last === '' || $last === '.' || $last === '..');
        return '/' . implode('/', $segments) . ($slash ? '/' : '');
    }
}
