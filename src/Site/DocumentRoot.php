<?php

declare(strict_types=1);

namespace Kiln\Site;

use Kiln\Http\Request;
use Kiln\Http\RequestHandler;
use Kiln\Http\Response;
use Kiln\Http\StaticFiles;
use Kiln\Http\Wire\ResponseEncoder;

/**
 * Serves a document root as Apache or nginx+php-fpm would: PathResolver decides what a path is; static
 * files go to StaticFiles, scripts to the runner the TierMap picks for them, and directory redirects and
 * refusals are answered here as short plain-text responses.
 */
final class DocumentRoot implements RequestHandler
{
    public function __construct(
        private readonly PathResolver $resolver,
        private readonly TierMap $tiers,
        private readonly StaticFiles $files,
    ) {}

    /**
     * A document root run as `kiln serve` runs one: the site's tiers, index files and front controller.
     *
     * @param array<string, Tier> $prefixes URL path prefix => the tier for scripts under it
     */
    public static function forSite(string $root, SiteConfig $site, array $prefixes = []): self
    {
        $resolver = new PathResolver($root, $site->frontController, scriptExtensions: $site->scriptExtensions(), cgiBin: $site->cgiBin);
        $redirects = new Internal\LateHandler();
        $documentRoot = new self($resolver, (new RunnerFactory($site, $redirects))->tierMap($prefixes), new StaticFiles($resolver->root()));
        $redirects->bind($documentRoot);
        return $documentRoot;
    }

    public function handle(Request $request): Response
    {
        $outcome = $this->resolver->resolve($request->path(), $request->queryString());
        if ($outcome instanceof Script) {
            return $this->tiers->runnerFor($outcome->scriptName)->run($request, $outcome);
        }
        if ($outcome instanceof StaticFile) {
            return $this->files->serveFile($request, $outcome->realPath);
        }
        if ($outcome instanceof Redirect) {
            $response = self::text($outcome->status, $outcome->location);
            $response->setHeader('Location', $outcome->location);
            return $response;
        }
        return self::text($outcome->status);
    }

    private static function text(int $status, string $detail = ''): Response
    {
        $line = $status . ' ' . ResponseEncoder::reason($status);
        return Response::text(($detail === '' ? $line : "$line: $detail") . "\n", $status);
    }
}
