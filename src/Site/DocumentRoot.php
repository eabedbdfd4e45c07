<?php

declare(strict_types=1);

namespace Kiln\Site;

use Kiln\Http\ErrorResponse;
use Kiln\Http\HttpException;
use Kiln\Http\Request;
use Kiln\Http\RequestHandler;
use Kiln\Http\Response;
use Kiln\Http\Static\StaticOptions;
use Kiln\Http\StaticFiles;
use Kiln\Http\Wire\ResponseEncoder;
use Kiln\Server\WorkerLog;
use Kiln\Site\Htaccess\ConfiguredRules;
use Kiln\Site\Htaccess\HtaccessRules;
use Kiln\Site\Htaccess\Outcome;
use Kiln\Site\Htaccess\RequestFacts;
use Kiln\Site\Htaccess\ResponseEditor;
use Kiln\Site\Htaccess\Settings;
use Kiln\Site\Htaccess\Verdict;
use Kiln\Site\Isolated\PhpCgiRunner;

/**
 * Serves a document root as Apache or nginx+php-fpm would: PathResolver decides what a path is; static
 * files go to StaticFiles, scripts to the runner the TierMap picks for them, and directory redirects and
 * refusals are answered here as short plain-text responses. A static file answers POST as GET, as Apache's
 * default handler does (nginx answers 405): forms and payment gateways post back to `.html` pages.
 *
 * With HtaccessRules, Apache's `.htaccess` files of the root decide first (docs/htaccess.md): access, then
 * rewriting, and the settings they give apply to what is served: the directory index, the script's query
 * string, variables and php.ini values, the response's headers, type and expiry, and the `ErrorDocument`
 * of a refusal Kiln makes. Their warnings go to the log, each once per parse of its file.
 */
final class DocumentRoot implements RequestHandler
{
    /** @var \Closure(string, string): void */
    private readonly \Closure $log;

    /** @var array<string, true> php.ini names already reported as not applied by their script's tier */
    private array $ignoredIni = [];

    /** @var array<string, true> what was logged once already: refused scripts (`php_flag engine off`) and symlinks */
    private array $logged = [];

    /** The front controller when it is not in the root (whose .htaccess is on every path), else null. */
    private readonly ?string $asideFrontController;

    /** @var \Closure(ScriptRunner): ?string */
    private readonly \Closure $phpIniIgnoredBy;

    /** @var \Closure(ScriptRunner): string */
    private readonly \Closure $tierOf;

    /**
     * @param (\Closure(string $level, string $message): void)|null $log where .htaccess warnings go; default the worker's error log
     * @param (\Closure(ScriptRunner): ?string)|null $phpIniIgnoredBy the tier name of a runner that cannot apply
     *        `php_value` (reported once per setting), null for one that can; default: the isolated tier's runner
     * @param (\Closure(ScriptRunner): string)|null $tierOf the tier name of a runner, put on the request for the metrics
     * @param array<string, string> $phpIni the settings every script gets already (`--php-ini`): a `php_value` that
     *        asks for the same value is not reported as not applied
     */
    public function __construct(
        private readonly PathResolver $resolver,
        private readonly TierMap $tiers,
        private readonly StaticFiles $files,
        private readonly ?HtaccessRules $htaccess = null,
        ?\Closure $log = null,
        ?\Closure $phpIniIgnoredBy = null,
        ?\Closure $tierOf = null,
        private readonly array $phpIni = [],
    ) {
        $this->tierOf = $tierOf ?? static fn(ScriptRunner $runner): string => 'script';
        $this->log = $log ?? WorkerLog::write(...);
        $this->phpIniIgnoredBy = $phpIniIgnoredBy ?? static fn(ScriptRunner $runner): ?string => $runner instanceof PhpCgiRunner ? Tier::Isolated->value : null;
        $frontController = $resolver->frontController();
        $this->asideFrontController = $frontController !== null && substr_count($frontController, '/') > 1 ? $frontController : null;
    }

    /**
     * A document root run as `kiln serve` runs one: the site's tiers, index files, front controller, and
     * its .htaccess files unless the site turned them off (`--no-htaccess`).
     *
     * @param array<string, Tier> $prefixes URL path prefix => the tier for scripts under it
     * @param array<string, string> $rules `.htaccess` rules given in app.php, by URL directory (applied even with
     *        `--no-htaccess`, which turns off the files only)
     * @param list<string> $cacheControl Cache-Control rules given in app.php, tried before the site's (`--cache-control`)
     */
    public static function forSite(string $root, SiteConfig $site, array $prefixes = [], array $rules = [], array $cacheControl = []): self
    {
        $resolver = new PathResolver($root, $site->frontController, scriptExtensions: $site->scriptExtensions(), cgiBin: $site->cgiBin, symlinks: $site->symlinks);
        $redirects = new Internal\LateHandler();
        $htaccess = match (true) {
            $rules !== [] => new HtaccessRules($resolver->root(), new ConfiguredRules($resolver->root(), $rules, $site->htaccess)),
            $site->htaccess => new HtaccessRules($resolver->root()),
            default => null,
        };
        $factory = new RunnerFactory($site, $redirects);
        $documentRoot = new self($resolver, $factory->tierMap($prefixes), new StaticFiles($resolver->root(), new StaticOptions(cache: $site->cachePolicy($cacheControl))), $htaccess, null, $factory->phpIniIgnoredBy(...), $factory->tierOf(...), $site->phpIni);
        $redirects->bind($documentRoot);
        return $documentRoot;
    }

    /** The document root's real path. */
    public function root(): string
    {
        return $this->resolver->root();
    }

    public function handle(Request $request): Response
    {
        $rules = $this->htaccess;
        $path = $request->path();
        if ($rules !== null && !$rules->untouched($path)) {
            return $this->withHtaccess($request, $rules);
        }
        $outcome = $this->resolver->resolve($path, $request->queryString());
        if ($outcome instanceof Script) {
            // No .htaccess on the path (the common case: one look-up). What is served beside it (an index,
            // page.php) shares its directories; a front controller in a subdirectory may not.
            if ($this->asideFrontController !== null && $rules !== null && $outcome->scriptName === $this->asideFrontController
                && !$rules->untouched($outcome->scriptName, false)) {
                return $this->withHtaccess($request, $rules);
            }
            return $this->run($request, $outcome);
        }
        if ($outcome instanceof StaticFile) {
            $request->setAttribute(Request::TIER, 'static');
            return $this->files->serveFile($request, $outcome->realPath, post: true);
        }
        if ($outcome instanceof Redirect) {
            return self::redirect($outcome->status, $outcome->location);
        }
        $this->logRefusal($path, $outcome);
        return ErrorResponse::forRequest($request, $outcome->status);
    }

    private function withHtaccess(Request $request, HtaccessRules $rules): Response
    {
        $facts = RequestFacts::fromRequest($request);
        $outcome = $rules->forRequest($facts);
        $this->logWarnings($rules);
        if ($outcome->verdict === Verdict::Redirect) {
            $response = self::redirect($outcome->status, (string) $outcome->location);
            ResponseEditor::apply($outcome->settings, $response, true, $outcome->env);
            return $response;
        }
        if ($outcome->verdict === Verdict::Refuse) {
            if ($outcome->status >= 500 || $outcome->status === 400) {
                // Not a rule that refuses on purpose ([F], Require) but one that fails: a rewrite loop, a rewrite
                // above the root. Apache logs these too; without a line the user sees a bare 500.
                $this->logOnce('rules ' . $request->path(), "{$request->path()}: {$outcome->status}, .htaccess: {$outcome->reason}");
            }
            return $this->error($request, $outcome->status, $outcome);
        }
        [$query, $type] = [$outcome->query, $outcome->type];
        // A site that declares its 404 page wants real 404s where it applies, as Apache gives them: the implicit
        // front controller (nginx's try_files) stays out of it; a rule that rewrites to index.php still runs it.
        $frontController = !$outcome->settings->declaresErrorDocument(404);
        $resolved = $this->resolver->resolve($outcome->path, $query, $outcome->settings->directoryIndex, $frontController);
        $target = $resolved instanceof Script || $resolved instanceof StaticFile ? self::target($resolved, $outcome->path) : null;
        if ($target !== null) {
            // Another file than the path names (a directory index, page → page.php, the front controller):
            // its own access rules and settings, as Apache's internal redirect or subrequest gives them.
            $outcome = $rules->forTarget($facts, $target, $outcome->env);
            $this->logWarnings($rules);
            if ($outcome->verdict === Verdict::Refuse) {
                return $this->error($request, 403, $outcome);
            }
        }
        $settings = $outcome->settings;
        if ($resolved instanceof Script && ($why = $settings->scriptRefusal(basename($resolved->scriptName))) !== null) {
            $this->refusedScript($resolved->scriptName, $why);
            return $this->error($request, 403, $outcome);
        }
        if ($resolved instanceof Script) {
            if ($outcome->env !== [] || $settings->phpIni !== [] || $query !== $request->queryString()) {
                $resolved = $resolved->with($query, $outcome->env, $settings->phpIni);
            }
            $env = $outcome->env;
            // Also to the response a script that ends its worker (exit() on the sequential tier) leaves with.
            $request->editLastResponse(static function (Response $last, bool $error) use ($settings, $env): void {
                ResponseEditor::apply($settings, $last, $error, $env);
            });
            $response = $this->run($request, $resolved);
            ResponseEditor::apply($settings, $response, false, $env);
            return $response;
        }
        if ($resolved instanceof StaticFile) {
            $response = $this->files->serveFile($request, $resolved->realPath, post: true);
            $modified = $settings->expiresActive === true ? (@filemtime($resolved->realPath) ?: null) : null;
            ResponseEditor::apply($settings, $response, $response->status() >= 400, $outcome->env, $resolved->realPath, $type, $modified);
            return $response;
        }
        if ($resolved instanceof Redirect) {
            $response = self::redirect($resolved->status, $resolved->location);
            ResponseEditor::apply($settings, $response, true, $outcome->env);
            return $response;
        }
        $this->logRefusal($outcome->path, $resolved);
        return $this->error($request, $resolved->status, $outcome);
    }

    /**
     * The URL path of what is served when it is not the one .htaccess rules saw (decoded), else null.
     */
    private static function target(Script|StaticFile $resolved, string $path): ?string
    {
        $decoded = rawurldecode($path);
        if ($resolved instanceof Script) {
            return $resolved->scriptName . $resolved->pathInfo === $decoded ? null : $resolved->scriptName;
        }
        // A static file is another one only as a directory's index.
        return str_ends_with($decoded, '/') ? $decoded . basename($resolved->realPath) : null;
    }

    private function run(Request $request, Script $script): Response
    {
        $runner = $this->tiers->runnerFor($script->scriptName);
        $tier = $script->phpIni === [] ? null : ($this->phpIniIgnoredBy)($runner);
        if ($tier !== null) {
            foreach ($script->phpIni as $name => $value) {
                if (!isset($this->ignoredIni[$name]) && ($this->phpIni[$name] ?? null) !== $value) {
                    $this->ignoredIni[$name] = true;
                    ($this->log)('warning', ".htaccess php_value $name ($script->scriptName): not applied by the $tier tier"
                        . ($tier === Tier::Isolated->value ? ' (php-cgi ignores PHP_VALUE)' : '')
                        . '; set it with --php-ini, or run these scripts on the sequential or fastcgi tier');
                }
            }
        }
        $tierName = ($this->tierOf)($runner);
        if (($tierName === Tier::Sequential->value || $tierName === Tier::Fork->value) && CliOnly::guards($script->filename)) {
            $this->logOnce('cli ' . $script->filename, "$script->scriptName: 403, not run: the script stops unless PHP runs from the "
                . "command line (it tests PHP_SAPI, php_sapi_name() or STDIN), and the $tierName tier runs PHP's CLI SAPI, where "
                . 'that test passes. Run it from a shell, or serve it on the isolated tier if it must answer over HTTP');
            return ErrorResponse::forRequest($request, 403);
        }
        $request->setAttribute(Request::TIER, $tierName);
        return $runner->run($request, $script);
    }

    /**
     * A refusal Kiln makes (403, 404, a rule's [F] or [G] …), with the `ErrorDocument` for its status: a
     * local path is served keeping the status (a script gets REDIRECT_STATUS and REDIRECT_URL), a URL is
     * a 302 to it, anything else is the body. Only `Header always` applies to it.
     */
    private function error(Request $request, int $status, Outcome $outcome): Response
    {
        $document = $outcome->settings->errorDocument($status);
        $response = null;
        if ($document !== null && str_starts_with($document, '/')) {
            $response = $this->errorPage($request, $status, $document, $outcome->env);
        } elseif ($document !== null && preg_match('~^https?://~i', $document) === 1) {
            $response = self::redirect(302, $document);
        } elseif ($document !== null) {
            $response = new Response($status, ['Content-Type' => 'text/html; charset=utf-8'], $document);
        }
        $response ??= ErrorResponse::forRequest($request, $status);
        ResponseEditor::apply($outcome->settings, $response, true, $outcome->env);
        return $response;
    }

    /**
     * The `ErrorDocument /path` of a status, or null when it cannot be served (missing, refused, not a
     * file or script itself): then Kiln's own text is sent, as Apache adds its own when the document fails.
     *
     * @param array<string, string> $env
     */
    private function errorPage(Request $request, int $status, string $document, array $env): ?Response
    {
        \assert($this->htaccess !== null);
        [$path, $query] = explode('?', $document, 2) + [1 => ''];
        $resolved = $this->resolver->resolve($path, $query);
        $decoded = rawurldecode($path);
        if ($resolved instanceof StaticFile && !str_ends_with($decoded, '/')) {
            $name = $decoded;
        } elseif ($resolved instanceof Script && $resolved->scriptName . $resolved->pathInfo === $decoded) {
            $name = $resolved->scriptName;
        } else {
            return null;
        }
        $target = $this->htaccess->forTarget(RequestFacts::fromRequest($request), $name, $env);
        $this->logWarnings($this->htaccess);
        if ($target->verdict !== Verdict::Proceed) {
            return null;
        }
        if ($resolved instanceof StaticFile) {
            try {
                $response = Response::file($resolved->realPath, $target->settings->contentTypeFor(basename($resolved->realPath)));
            } catch (HttpException) {
                return null;
            }
            $response->setStatus($status);
            return $response;
        }
        $redirect = ['REDIRECT_STATUS' => (string) $status, 'REDIRECT_URL' => rawurldecode($request->path())];
        if ($request->queryString() !== '') {
            $redirect['REDIRECT_QUERY_STRING'] = $request->queryString();
        }
        $response = $this->run($request, $resolved->with($query, $redirect + $target->env, $target->settings->phpIni));
        if ($response->status() === 200) {
            $response->setStatus($status);
        }
        return $response;
    }

    /**
     * A script whose .htaccess turns PHP off is refused, never run and never served as source (Apache
     * would send its source as a file): logged once per script and worker.
     */
    private function refusedScript(string $scriptName, string $why): void
    {
        $this->logOnce('engine ' . $scriptName, "$scriptName: 403, not run: PHP is off for it ($why in .htaccess); Apache would send its source, Kiln sends neither");
    }

    /** A refusal Apache might not make (a symlink out of the root): its reason, once per path and worker. */
    private function logRefusal(string $path, Refusal $refusal): void
    {
        if (!$refusal->logged) {
            return;
        }
        $this->logOnce('refused ' . $path, "$path: {$refusal->status}, not served: {$refusal->reason}");
    }

    private function logOnce(string $key, string $message): void
    {
        if (\count($this->logged) >= 1000) {
            $this->logged = [];
        }
        if (!isset($this->logged[$key])) {
            $this->logged[$key] = true;
            ($this->log)('warning', $message);
        }
    }

    private function logWarnings(HtaccessRules $rules): void
    {
        foreach ($rules->takeWarnings() as $warning) {
            ($this->log)('warning', (string) $warning);
        }
    }

    private static function redirect(int $status, string $location): Response
    {
        $response = Response::text($status . ' ' . ResponseEncoder::reason($status) . ": $location\n", $status);
        $response->setHeader('Location', $location);
        return $response;
    }
}
