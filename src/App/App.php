<?php

declare(strict_types=1);

namespace Kiln\App;

use Kiln\Http\Request;
use Kiln\Http\RequestHandler;
use Kiln\Http\Response;

/**
 * A Kiln application: routes to handlers. `app.php` builds one and returns it (or calls run()).
 *
 * Handlers get the Request; what they return becomes the response: a string is HTML, an array or
 * JsonSerializable is JSON, an int is a status with its default text, a Response is sent as it is,
 * an iterable (a Generator) is streamed as it is produced.
 */
final class App implements RequestHandler
{
    /** @var array<string, array<string, \Closure>> path => method => handler */
    private array $routes = [];

    /** @var self|null the App a script handed over by calling run() while being loaded by a worker */
    private static ?self $handedOver = null;

    private static bool $loading = false;

    public function get(string $path, \Closure $handler): self
    {
        return $this->route(['GET'], $path, $handler);
    }

    public function post(string $path, \Closure $handler): self
    {
        return $this->route(['POST'], $path, $handler);
    }

    public function put(string $path, \Closure $handler): self
    {
        return $this->route(['PUT'], $path, $handler);
    }

    public function patch(string $path, \Closure $handler): self
    {
        return $this->route(['PATCH'], $path, $handler);
    }

    public function delete(string $path, \Closure $handler): self
    {
        return $this->route(['DELETE'], $path, $handler);
    }

    public function options(string $path, \Closure $handler): self
    {
        return $this->route(['OPTIONS'], $path, $handler);
    }

    public function any(string $path, \Closure $handler): self
    {
        return $this->route(['*'], $path, $handler);
    }

    /** @param list<string> $methods */
    public function route(array $methods, string $path, \Closure $handler): self
    {
        if ($path === '' || $path[0] !== '/') {
            throw new \ValueError("A route path must start with '/', got '$path'");
        }
        foreach ($methods as $method) {
            $this->routes[$path][strtoupper($method)] = $handler;
        }
        return $this;
    }

    public function handle(Request $request): Response
    {
        $byMethod = $this->routes[$request->path()] ?? null;
        if ($byMethod === null) {
            return Result::status(404);
        }
        $method = $request->method();
        $handler = $byMethod[$method] ?? $byMethod['*'] ?? ($method === 'HEAD' ? $byMethod['GET'] ?? null : null);
        if ($handler === null) {
            $response = Result::status(405);
            $response->setHeader('Allow', implode(', ', array_keys($byMethod)));
            return $response;
        }
        return Result::toResponse($handler($request));
    }

    /**
     * Serves this app: `php app.php [--listen=… --workers=…]` behaves as `kiln serve app.php …`.
     * Workers load the script afresh (so a reload picks up new code); there, run() only hands the App over.
     */
    public function run(): void
    {
        if (self::$loading) {
            self::$handedOver = $this;
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
     * Loads an app script in this process and returns its App.
     *
     * @internal used by the worker
     */
    public static function load(string $script): self
    {
        self::$loading = true;
        self::$handedOver = null;
        try {
            $result = (static fn(string $__file): mixed => require $__file)($script);
        } finally {
            self::$loading = false;
        }
        $app = $result instanceof self ? $result : self::$handedOver;
        self::$handedOver = null;
        if ($app === null) {
            throw new \Error("$script must return an App (`return \$app;`) or call `\$app->run()`");
        }
        return $app;
    }
}
