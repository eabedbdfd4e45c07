<?php

declare(strict_types=1);

namespace Kiln\Site;

/**
 * Which ScriptRunner runs a script, by its SCRIPT_NAME: first a tree that takes every script under it
 * whatever its extension (`/cgi-bin/` → CGI); then its extension (`.py` → a FastCGI upstream, so a file is
 * never handed to an interpreter for another language); then the longest path prefix (`/wp-admin/` →
 * isolated); else the default. A prefix means itself and everything under it: `/wp-admin` and
 * `/wp-admin/` both match `/wp-admin/x.php`, neither matches `/wp-adminx.php`.
 * Immutable: the with*() methods return a new map.
 */
final class TierMap
{
    /** @var array<string, ScriptRunner> prefix without its trailing slash ('' for /) => runner */
    private array $prefixes = [];

    /** @var array<string, ScriptRunner> extension with its dot => runner */
    private array $extensions = [];

    /** @var array<string, ScriptRunner> as $prefixes, but before the extensions */
    private array $trees = [];

    /**
     * @param array<string, ScriptRunner> $prefixes URL path prefix => runner
     * @param array<string, ScriptRunner> $extensions `.py` => runner (case-sensitive)
     */
    public function __construct(
        private readonly ScriptRunner $default,
        array $prefixes = [],
        array $extensions = [],
    ) {
        foreach ($prefixes as $prefix => $runner) {
            $this->prefixes[self::prefix($prefix)] = $runner;
        }
        foreach ($extensions as $extension => $runner) {
            $this->extensions[self::extension($extension)] = $runner;
        }
    }

    public function withPrefix(string $prefix, ScriptRunner $runner): self
    {
        $map = clone $this;
        $map->prefixes[self::prefix($prefix)] = $runner;
        return $map;
    }

    /** Every script under $prefix goes to $runner, whatever its extension (a cgi-bin directory). */
    public function withTree(string $prefix, ScriptRunner $runner): self
    {
        $map = clone $this;
        $map->trees[self::prefix($prefix)] = $runner;
        return $map;
    }

    public function withExtension(string $extension, ScriptRunner $runner): self
    {
        $map = clone $this;
        $map->extensions[self::extension($extension)] = $runner;
        return $map;
    }

    /** @param string $scriptName decoded URL path of the script (Script::$scriptName) */
    public function runnerFor(string $scriptName): ScriptRunner
    {
        if ($this->trees !== [] && ($runner = self::longest($this->trees, $scriptName)) !== null) {
            return $runner;
        }
        if ($this->extensions !== []) {
            $dot = strrpos($scriptName, '.');
            if ($dot !== false && !str_contains(substr($scriptName, $dot), '/')) {
                $runner = $this->extensions[substr($scriptName, $dot)] ?? null;
                if ($runner !== null) {
                    return $runner;
                }
            }
        }
        if ($this->prefixes !== []) {
            return self::longest($this->prefixes, $scriptName) ?? $this->default;
        }
        return $this->default;
    }

    public function defaultRunner(): ScriptRunner
    {
        return $this->default;
    }

    /** @param array<string, ScriptRunner> $prefixes */
    private static function longest(array $prefixes, string $scriptName): ?ScriptRunner
    {
        $path = rtrim($scriptName, '/');
        while (true) {
            if (isset($prefixes[$path])) {
                return $prefixes[$path];
            }
            $slash = strrpos($path, '/');
            if ($slash === false) {
                return null;
            }
            $path = substr($path, 0, $slash);
        }
    }

    private static function prefix(string $prefix): string
    {
        if (!str_starts_with($prefix, '/')) {
            throw new \ValueError("A tier path prefix must start with /, got '$prefix'");
        }
        return rtrim($prefix, '/');
    }

    private static function extension(string $extension): string
    {
        if (preg_match('/^\.[A-Za-z0-9_]+$/', $extension) !== 1) {
            throw new \ValueError("A tier extension must be a dot and a name such as .py, got '$extension'");
        }
        return $extension;
    }
}
