<?php

declare(strict_types=1);

namespace Kiln\App\Internal;

use Kiln\Site\DocumentRoot;
use Kiln\Site\Htaccess\ConfiguredRules;
use Kiln\Site\SiteConfig;
use Kiln\Site\Tier;
use Kiln\Store\Session\SessionStore;
use Kiln\Store\Session\StoreSessionHandler;

/**
 * @internal
 *
 * A document root mounted under an App's routes (App::site()): what site() was told, checked when it is called so
 * a mistake stops the start, not a worker; the DocumentRoot itself is made in the worker with the server's
 * settings (documentRoot()).
 */
final class SiteMount
{
    /**
     * @param array<string, Tier> $prefixes
     * @param array<string, string> $rules
     * @param list<string> $cacheControl
     */
    private function __construct(
        private readonly string $root,
        private readonly array $prefixes,
        private readonly ?Tier $tier,
        private readonly array $rules,
        private readonly array $cacheControl,
    ) {}

    /**
     * @param array<string, string> $tiers URL path prefix => tier name
     * @param array<string, string> $rules URL directory => `.htaccess` rules
     * @param list<string> $cacheControl
     * @throws \ValueError naming what site() was given wrong
     */
    public static function checked(string $root, array $tiers, ?string $tier, array $rules, array $cacheControl): self
    {
        $real = realpath($root);
        if ($real === false || !is_dir($real)) {
            throw new \ValueError("site(): '$root' is not a directory");
        }
        $parse = static fn(string $name): Tier => Tier::tryFrom($name) ?? throw new \ValueError(
            "site(): unknown tier '$name', use one of sequential, isolated, fork, fastcgi",
        );
        $prefixes = [];
        foreach ($tiers as $prefix => $name) {
            if (!str_starts_with((string) $prefix, '/')) {
                throw new \ValueError("site(): a tier prefix is a URL path starting with /, got '$prefix'");
            }
            $prefixes[(string) $prefix] = $parse($name);
        }
        new ConfiguredRules($real, $rules); // refuses a bad directory now, not in the worker
        SiteConfig::policy($cacheControl, 'site() cacheControl'); // and a bad cache rule
        return new self($real, $prefixes, $tier === null ? null : $parse($tier), $rules, $cacheControl);
    }

    /** The document root with the server's settings; classic scripts keep their sessions in $sessions when given. */
    public function documentRoot(SiteConfig $config, ?SessionStore $sessions): DocumentRoot
    {
        if ($sessions !== null) {
            $config = $config->withSessionHandler(new StoreSessionHandler($sessions));
        }
        return DocumentRoot::forSite($this->root, $this->tier === null ? $config : $config->withTier($this->tier), $this->prefixes, $this->rules, $this->cacheControl);
    }
}
