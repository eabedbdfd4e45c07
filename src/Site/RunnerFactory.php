<?php

declare(strict_types=1);

namespace Kiln\Site;

use Kiln\Http\RequestHandler;
use Kiln\Isolation\Cgi\CgiLauncher;
use Kiln\Server\ServerException;
use Kiln\Server\WorkerLog;
use Kiln\Site\Internal\LazyRunner;

/**
 * Builds the ScriptRunner of each tier from a SiteConfig, and the TierMap of a document root. Called in
 * the worker. Each builder below is one line.
 */
final class RunnerFactory
{
    /** @var \SplObjectStorage<ScriptRunner, string> runners of tierMap() that cannot apply a Script's phpIni => tier name */
    private readonly \SplObjectStorage $ignorePhpIni;

    /** @var \SplObjectStorage<ScriptRunner, string> every runner of tierMap() => its tier name */
    private readonly \SplObjectStorage $tiers;

    /** @param ?RequestHandler $redirects where CGI local redirects (`Location: /path`) are served again */
    public function __construct(
        private readonly SiteConfig $config,
        private readonly ?RequestHandler $redirects = null,
    ) {
        $this->ignorePhpIni = new \SplObjectStorage();
        $this->tiers = new \SplObjectStorage();
    }

    /** The tier name of a runner from tierMap() (the metrics' `tier` label). */
    public function tierOf(ScriptRunner $runner): string
    {
        return $this->tiers->contains($runner) ? $this->tiers[$runner] : 'script';
    }

    /**
     * The tier name of a runner from tierMap() that does not apply a Script's php.ini values (`php_value`
     * in .htaccess): isolated (php-cgi ignores PHP_VALUE), fork, CGI; null for the others.
     */
    public function phpIniIgnoredBy(ScriptRunner $runner): ?string
    {
        return $this->ignorePhpIni->contains($runner) ? $this->ignorePhpIni[$runner] : null;
    }

    /**
     * The document root's map: every script to the configured tier, `/cgi-bin/` to the CGI runner (with
     * --cgi-bin), each --fastcgi-map extension to its upstream, each of $prefixes to its tier. Runners are
     * built on first use, but the php-cgi pool, which is asked for at worker boot so that the first request
     * does not wait for children to start. One runner per tier, however many prefixes use it.
     *
     * @param array<string, Tier> $prefixes URL path prefix => tier
     * @throws ServerException when a tier the map needs cannot run in this process (the sequential tier without FFI)
     */
    public function tierMap(array $prefixes = []): TierMap
    {
        $this->refuseUnavailableSequential($prefixes);
        $runners = [];
        $runner = function (Tier $tier) use (&$runners): ScriptRunner {
            if (!isset($runners[$tier->value])) {
                $runners[$tier->value] = $tier === Tier::Isolated ? $this->create($tier) : new LazyRunner(fn(): ScriptRunner => $this->create($tier));
                $this->tiers[$runners[$tier->value]] = $tier->value;
                if ($tier === Tier::Isolated || $tier === Tier::Fork) {
                    $this->ignorePhpIni[$runners[$tier->value]] = $tier->value;
                }
            }
            return $runners[$tier->value];
        };
        $map = new TierMap($runner($this->config->tier));
        foreach ($prefixes as $prefix => $tier) {
            $map = $map->withPrefix($prefix, $runner($tier));
        }
        if ($this->config->cgiBin !== null) {
            $cgi = new LazyRunner(fn(): ScriptRunner => $this->create(Tier::Cgi));
            $this->ignorePhpIni[$cgi] = Tier::Cgi->value;
            $this->tiers[$cgi] = Tier::Cgi->value;
            $map = $map->withTree('/cgi-bin/', $cgi);
        }
        foreach ($this->config->fastcgiMap as $extension => $address) {
            $upstream = new LazyRunner(fn(): ScriptRunner => $this->fastCgi($address));
            $this->tiers[$upstream] = Tier::FastCgi->value;
            $map = $map->withExtension($extension, $upstream);
        }
        return $map;
    }

    /** @throws \Error when fastcgi has no address */
    public function create(Tier $tier): ScriptRunner
    {
        return match ($tier) {
            Tier::Sequential => $this->sequential(),
            Tier::Isolated => $this->isolated(),
            Tier::Fork => $this->fork(),
            Tier::Cgi => $this->cgi(),
            Tier::FastCgi => $this->fastCgi($this->config->fastcgi ?? throw new \Error('The fastcgi tier needs an upstream address (--fastcgi=ADDR)')),
        };
    }

    /** A FastCGI upstream runner for one address (`host:port` or `unix:/path`, see SiteConfig::socketUri()). */
    public function fastCgi(string $address): ScriptRunner
    {
        return Upstream\FastCgiUpstream::create($address, $this->config, WorkerLog::write(...), redirects: $this->redirects);
    }

    private function sequential(): ScriptRunner
    {
        $runner = Sequential\SequentialRunner::fromConfig($this->config);
        return $this->config->dev ? new Sequential\DevReport($runner) : $runner;
    }

    private function isolated(): ScriptRunner
    {
        return Isolated\PhpCgiRunner::fromConfig($this->config, WorkerLog::write(...));
    }

    private function fork(): ScriptRunner
    {
        return Fork\ForkRunner::create($this->config->forkMax, $this->config->timeLimit, WorkerLog::write(...), $this->config->phpIni);
    }

    private function cgi(): ScriptRunner
    {
        $launcher = new CgiLauncher(timeout: $this->config->timeLimit > 0 ? $this->config->timeLimit : 86_400.0);
        return new Cgi\CgiRunner($launcher, $this->redirects, WorkerLog::write(...));
    }

    /**
     * The start-up check of the sequential tier, whichever way it was chosen (`--tier`, `--tier=auto`
     * without php-cgi, an app's `site()` for all its scripts or for a path prefix): its runner is built on
     * first use, so without it Kiln would start and answer each of those scripts with a 500. Thrown at
     * worker boot (DocumentRoot::forSite()), the reason ends `kiln serve` before `ready`.
     *
     * @param array<string, Tier> $prefixes
     * @throws ServerException when the tier is asked for and cannot run in this process (no FFI)
     */
    private function refuseUnavailableSequential(array $prefixes): void
    {
        $under = array_keys(array_filter($prefixes, static fn(Tier $tier): bool => $tier === Tier::Sequential));
        if ($this->config->tier !== Tier::Sequential && $under === []) {
            return;
        }
        $reason = Sequential\SequentialRunner::unsupportedReason();
        if ($reason === null) {
            return;
        }
        $scripts = match (true) {
            $this->config->tier !== Tier::Sequential => "the site's scripts under " . implode(', ', $under) . ' on the sequential tier',
            $this->config->requestedTier === 'auto' => "the site's scripts on the sequential tier (what --tier=auto picks without php-cgi)",
            default => "the site's scripts on the sequential tier",
        };
        throw new ServerException("cannot run $scripts: $reason");
    }
}
