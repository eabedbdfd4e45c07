<?php

declare(strict_types=1);

namespace Kiln\App\Handler;

use Kiln\App\App;
use Kiln\App\Context;
use Kiln\App\Handler\Internal\Parameter;
use Kiln\App\Handler\Internal\ParameterSource;
use Kiln\App\Handler\Internal\Resolved;
use Kiln\App\Handler\Internal\Resolver;
use Kiln\App\Handler\Internal\Signature;
use Kiln\App\HttpError;
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
     * What the handler echoes is captured from its start to its return (per Fiber, see OutputCapture) and
     * sent before its returned body; if it throws, the echoed output is discarded with it.
     *
     * @param array<string, string> $params route parameters
     * @param ?Context $context null: one is made only if the handler takes a Context (most do not)
     * @throws HttpError 404 when a route parameter does not fit the handler's declared type
     */
    public function invoke(mixed $handler, Request $request, array $params, ?Context $context, App $app): Response
    {
        if ($handler instanceof \Closure) {
            $signature = $this->closures[$handler] ??= Resolver::resolve($handler)->signature;
            $target = $handler;
        } else {
            [$signature, $target] = $this->callable($handler, Resolver::key($handler));
        }
        $response = $signature->wantsResponse ? new Response() : null;
        $outer = $this->output->begin();
        try {
            $result = match ($signature->shape) {
                Signature::SHAPE_NONE => $target(),
                Signature::SHAPE_REQUEST => $target($request),
                default => $target(...$this->arguments($signature, $request, $params, $context, $app, $response)),
            };
        } finally {
            $echoed = $this->output->end($outer);
        }
        if ($response === null || $result === $response || !self::filled($response)) {
            // A string, the commonest result, converted here: ResultConverter::convert() would do the same.
            return \is_string($result)
                ? new Response(200, ['Content-Type' => 'text/html; charset=utf-8'], $echoed . $result)
                : ResultConverter::convert($result, $echoed);
        }
        return self::merge($response, $result, $echoed);
    }

    /**
     * @return array{Signature, callable}
     */
    private function callable(mixed $handler, string $key): array
    {
        $resolved = $this->resolved[$key] ??= Resolver::resolve($handler);
        if ($resolved->instanceOf === null) {
            \assert(\is_callable($handler));
            return [$resolved->signature, $handler];
        }
        return [$resolved->signature, $this->targets[$key] ??= $this->bind($resolved)];
    }

    private function bind(Resolved $resolved): \Closure
    {
        $class = $resolved->instanceOf ?? throw new \LogicException('not an instance method');
        $instance = $this->instances[$class] ??= new $class();
        $method = $resolved->method;
        return $instance->$method(...);
    }

    /**
     * @param array<string, string> $params
     * @return list<mixed>
     */
    private function arguments(Signature $signature, Request $request, array $params, ?Context $context, App $app, ?Response $response): array
    {
        $arguments = [];
        foreach ($signature->parameters as $parameter) {
            $arguments[] = match ($parameter->source) {
                ParameterSource::Route => self::routeArgument($signature, $parameter, $params),
                ParameterSource::Request => $request,
                ParameterSource::Context => $context ??= new Context($request, $params),
                ParameterSource::App => $app,
                ParameterSource::Response => $response,
                ParameterSource::Default => $parameter->default,
            };
        }
        return $arguments;
    }

    /** @param array<string, string> $params */
    private static function routeArgument(Signature $signature, Parameter $parameter, array $params): mixed
    {
        $value = $params[$parameter->name] ?? null;
        if ($value === null) {
            if ($parameter->optional) {
                return $parameter->default;
            }
            throw new \Error("Handler $signature->name needs route parameter \$$parameter->name, but the route did "
                . "not match one: add {{$parameter->name}} to the route pattern, or give \$$parameter->name a "
                . 'default value or a nullable type');
        }
        foreach ($parameter->types as $type) { // usually one
            $coerced = $type->coerce($value);
            if ($coerced !== null) {
                return $coerced;
            }
        }
        throw HttpError::notFound();
    }

    /** Whether the handler wrote into the injected Response (it starts as 200, no headers, empty body). */
    private static function filled(Response $response): bool
    {
        return $response->status() !== 200 || $response->body() !== '' || $response->headers() !== []
            || $response->upgrade() !== null;
    }

    /**
     * The handler filled the injected Response and returned something else: the returned value makes the
     * body; the injected status (unless an int was returned) and headers apply on top. A returned Response
     * keeps its own status and headers, taking only the injected headers it does not set.
     */
    private static function merge(Response $injected, mixed $result, string $echoed): Response
    {
        if ($result === null) {
            return ResultConverter::convert($injected, $echoed);
        }
        $response = ResultConverter::convert($result, $echoed);
        $returnedResponse = $result instanceof Response;
        if (!$returnedResponse && !\is_int($result) && $injected->status() !== 200) {
            $response->setStatus($injected->status());
        }
        foreach ($injected->headers() as $name => $values) {
            if (!$returnedResponse || !$response->hasHeader($name)) {
                $response->setHeader($name, $values);
            }
        }
        return $response;
    }
}
