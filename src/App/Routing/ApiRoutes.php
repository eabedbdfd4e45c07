<?php

declare(strict_types=1);

namespace Kiln\App\Routing;

/**
 * File routes: every `*.php` file under a directory is a route, its path mirroring the file's
 * (`api/users/list.php` → `/api/users/list`; `index.php` stands for its directory: `api/users/index.php`
 * → `/api/users`, `api/index.php` → `/api`). Names are matched literally (no parameters: a file called
 * `{id}.php` answers `/api/%7Bid%7D`).
 *
 * A file returns either a handler (closure, invokable, [Class::class, 'method'], 'Class::method'), which
 * answers every method, or a map of methods to handlers (`['GET' => ..., 'POST' => ...]`), which answers
 * those methods only (others get 405). Files and directories whose name starts with '.' or '_' are private:
 * not routes (put helpers there). Symlinks are followed only while they stay inside the directory.
 * Each file is loaded once, at mount time, in a scope of its own.
 */
final class ApiRoutes
{
    public static function mount(RouteCollector $routes, string $dir, string $prefix = '/api'): void
    {
        $root = realpath($dir);
        if ($root === false || !is_dir($root)) {
            throw new \ValueError("API directory '$dir' does not exist");
        }
        $prefix = rtrim($prefix, '/');
        if ($prefix !== '' && $prefix[0] !== '/') {
            throw new \ValueError("An API prefix must start with '/', got '$prefix'");
        }
        $files = [];
        self::collect($root, $root, '', [], $files);
        foreach ($files as $relative => $file) {
            $path = $prefix . $relative;
            self::register($routes, $path === '' ? '/' : $path, $file);
        }
    }

    /**
     * @param array<string, true> $visited real paths of the directories above (a symlink loop stops there)
     * @param array<string, string> $found URL path (below the prefix) => file
     */
    private static function collect(string $root, string $dir, string $base, array $visited, array &$found): void
    {
        $real = realpath($dir);
        if ($real === false || isset($visited[$real])) {
            return;
        }
        $visited[$real] = true;
        foreach (scandir($dir) ?: [] as $entry) {
            if ($entry === '' || $entry[0] === '.' || $entry[0] === '_') {
                continue;
            }
            $full = $dir . '/' . $entry;
            $target = realpath($full);
            if ($target === false || ($target !== $root && !str_starts_with($target, $root . '/'))) {
                continue;
            }
            if (is_dir($target)) {
                self::collect($root, $full, $base . '/' . rawurlencode($entry), $visited, $found);
            } elseif (is_file($target) && str_ends_with($entry, '.php')) {
                $name = substr($entry, 0, -4);
                $path = $name === 'index' ? $base : $base . '/' . rawurlencode($name);
                if (isset($found[$path])) {
                    throw new \ValueError("API files {$found[$path]} and $full would both answer '$path'; remove one");
                }
                $found[$path] = $full;
            }
        }
    }

    private static function register(RouteCollector $routes, string $path, string $file): void
    {
        $handler = (static function (string $__file): mixed {
            return require $__file;
        })($file);
        if (!is_array($handler) || array_is_list($handler)) {
            if (!is_object($handler) && !is_array($handler) && !is_string($handler)) {
                throw new \ValueError("API file $file must return a handler or a ['METHOD' => handler] map, got " . get_debug_type($handler));
            }
            $routes->any($path, $handler);
            return;
        }
        foreach ($handler as $method => $methodHandler) {
            if (!is_string($method)) {
                throw new \ValueError("API file $file: a method map needs method names as keys, got $method");
            }
            $routes->route([strtoupper($method)], $path, $methodHandler);
        }
    }
}
