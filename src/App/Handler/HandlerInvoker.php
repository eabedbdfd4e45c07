<?php

declare(strict_types=1);

namespace Kiln\App\Handler;

use Kiln\App\App;
use Kiln\App\Context;
use Kiln\App\Handler\Internal\PreparedHandler;
use Kiln\App\Handler\Internal\Resolved;
use Kiln\App\Handler\Internal\Resolver;
use Kiln\App\Handler\Internal\Signature;
use Kiln\App\HttpErrorException;
use Kiln\Http\Request;
use Kiln\Http\Response;

/**
 * Calls route handlers: resolves the handler, injects its parameters, captures what it echoes and turns
 * what it returns into a Response (ResultConverter).
 *
 * Handler forms: a Closure; an invokable object; [Class::class, 'method'] or 'Class::method' (a static
 * method is called statically; otherwise on one instance per worker, made with `new Class()` on first use);
 * [$object, 'method']. Parameters are injected by declared type — Request, Context, App, and Response (a
 * fresh one the handler may fill: returned null, a filled one is sent; returned a value, its status and
 * headers apply to the converted response) — and the rest by name from the route parameters, coerced to
 * int, float, bool or string (untyped and mixed take the string). A route parameter that does not fit its
 * type is a 404; an absent one takes the parameter's default, or null if nullable. What reflection finds
 * is cached per handler: Closures in a WeakMap, the other forms by class and method.
 *
 * One invoker per App, so per worker; it keeps no per-request state.
 */
final class HandlerInvoker
{
    /** @var \WeakMap<\Closure, Signature> */
    private \WeakMap $closures;

    /** @var array<string, Resolved> by Resolver::key() */
    private array $resolved = [];

    /** @var array<string, \Closure> bound instance methods, by Resolver::key() */
    private array $targets = [];

    /** @var array<class-string, object> */
    private array $instances = [];

    private readonly OutputCapture $output;

    public function __construct()
    {
        $this->closures = new \WeakMap();
        $this->output = OutputCapture::instance();
    }

    /**
     * Checks a handler can be called and caches its analysis; throws \Error saying why not.
     * The App calls this when a route is registered, so a bad handler fails at boot, not at first request.
     */
    public function resolve(mixed $handler): void
    {
        if ($handler instanceof \Closure) {
            $this->closures[$handler] ??= Resolver::resolve($handler)->signature;
            return;
        }
        $this->resolved[Resolver::key($handler)] ??= Resolver::resolve($handler);
    }

    /**
     * Calls a handler once: prepare() then PreparedHandler::call(). What the handler echoes is captured from
     * its start to its return (per Fiber, see OutputCapture) and sent before its returned body; if it throws,
     * the echoed output is discarded with it.
     *
     * @param array<string, string> $params route parameters
     * @param ?Context $context null: one is made only if the handler takes a Context (most do not)
     * @throws HttpErrorException 404 when a route parameter does not fit the handler's declared type
     */
    public function invoke(mixed $handler, Request $request, array $params, ?Context $context, App $app): Response
    {
        return $this->prepare($handler)->call($request, $params, $context, $app);
    }

    /**
     * The handler ready to be called request after request: resolved (from the cache resolve() fills), its
     * worker-wide instance made if it is an instance method. Keep it to call one handler often (the App's
     * dispatcher keeps one per route).
     */
    public function prepare(mixed $handler): PreparedHandler
    {
        if ($handler instanceof \Closure) {
            return new PreparedHandler($this->closures[$handler] ??= Resolver::resolve($handler)->signature, $handler, $this->output);
        }
        $key = Resolver::key($handler);
        $resolved = $this->resolved[$key] ??= Resolver::resolve($handler);
        if ($resolved->instanceOf === null) {
            \assert(\is_callable($handler));
            $target = \Closure::fromCallable($handler);
        } else {
            $target = $this->targets[$key] ??= $this->bind($resolved);
        }
        return new PreparedHandler($resolved->signature, $target, $this->output);
    }

    private function bind(Resolved $resolved): \Closure
    {
        $class = $resolved->instanceOf ?? throw new \LogicException('not an instance method');
        $instance = $this->instances[$class] ??= new $class();
        $method = $resolved->method;
        return $instance->$method(...);
    }
}
