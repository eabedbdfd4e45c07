<?php

declare(strict_types=1);

namespace Kiln\App\Handler\Internal;

use Kiln\App\App;
use Kiln\App\Context;
use Kiln\App\Handler\OutputCapture;
use Kiln\App\Handler\ResultConverter;
use Kiln\App\HttpErrorException;
use Kiln\App\Session;
use Kiln\Http\Request;
use Kiln\Http\Response;

/**
 * One handler, resolved once: its target as a Closure and what its parameters ask for. call() does the
 * per-request part of HandlerInvoker::invoke(): injection, echo capture, conversion of the result. The App's
 * dispatcher keeps one per route, so a request pays for no resolution or cache lookup.
 *
 * @internal made by HandlerInvoker::prepare()
 */
final class PreparedHandler
{
    private readonly int $shape;

    private readonly bool $wantsResponse;

    public function __construct(
        private readonly Signature $signature,
        private readonly \Closure $target,
        private readonly OutputCapture $output,
    ) {
        $this->shape = $signature->shape;
        $this->wantsResponse = $signature->wantsResponse;
    }

    /**
     * What the handler echoes is captured from its start to its return (per Fiber, see OutputCapture) and
     * sent before its returned body; if it throws, the echoed output is discarded with it.
     *
     * The capture is ended by a catch and after it, not by a finally: PHP's tracing JIT compiles no trace
     * through a finally block, and this method is on every route's path (measured side by side: the App went
     * from 0.89× to 0.99× the bare engine, docs/design/010). The one case a finally also covered, a Fiber
     * destroyed while suspended in the handler, OutputCapture::begin() cleans up.
     *
     * @param array<string, string> $params route parameters
     * @param ?Context $context null: one is made only if the handler takes a Context (most do not)
     * @throws HttpErrorException 404 when a route parameter does not fit the handler's declared type
     */
    public function call(Request $request, array $params, ?Context $context, App $app): Response
    {
        $response = $this->wantsResponse ? new Response() : null;
        $outer = $this->output->begin();
        try {
            $result = match ($this->shape) {
                Signature::SHAPE_NONE => ($this->target)(),
                Signature::SHAPE_REQUEST => ($this->target)($request),
                default => ($this->target)(...$this->arguments($request, $params, $context, $app, $response)),
            };
        } catch (\Throwable $e) {
            $this->output->end($outer);
            throw $e;
        }
        $echoed = $this->output->end($outer);
        if ($response === null || $result === $response || !self::filled($response)) {
            // A string or an array with nothing echoed, the commonest results, converted here:
            // ResultConverter::convert() would make the same response.
            if (\is_string($result)) {
                return Prototypes::html($echoed . $result);
            }
            return \is_array($result) && $echoed === ''
                ? Prototypes::json($result)
                : ResultConverter::convert($result, $echoed);
        }
        return self::merge($response, $result, $echoed);
    }

    /**
     * @param array<string, string> $params
     * @return list<mixed>
     */
    private function arguments(Request $request, array $params, ?Context $context, App $app, ?Response $response): array
    {
        $arguments = [];
        foreach ($this->signature->parameters as $parameter) {
            $arguments[] = match ($parameter->source) {
                ParameterSource::Route => $this->routeArgument($parameter, $params),
                ParameterSource::Request => $request,
                ParameterSource::Context => $context ??= new Context($request, $params),
                ParameterSource::App => $app,
                ParameterSource::Response => $response,
                ParameterSource::Session => $request->attribute(Session::class) ?? throw new \Error('A handler takes a Session: call $app->sessions() first'),
                ParameterSource::Default => $parameter->default,
            };
        }
        return $arguments;
    }

    /** @param array<string, string> $params */
    private function routeArgument(Parameter $parameter, array $params): mixed
    {
        $value = $params[$parameter->name] ?? null;
        if ($value === null) {
            if ($parameter->optional) {
                return $parameter->default;
            }
            throw new \Error("Handler {$this->signature->name} needs route parameter \$$parameter->name, but the "
                . "route did not match one: add {{$parameter->name}} to the route pattern, or give "
                . "\$$parameter->name a default value or a nullable type");
        }
        foreach ($parameter->types as $type) { // usually one
            $coerced = $type->coerce($value);
            if ($coerced !== null) {
                return $coerced;
            }
        }
        throw HttpErrorException::notFound();
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
