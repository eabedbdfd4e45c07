<?php

declare(strict_types=1);

namespace Kiln\App;

use Kiln\Http\BadRequestBodyException;
use Kiln\Http\ErrorPage;
use Kiln\Http\ErrorPageFormat;
use Kiln\Http\Request;
use Kiln\Http\Response;
use Kiln\Http\Wire\ResponseEncoder;
use Kiln\Server\Task\TaskQueueFullException;
use Kiln\Store\StoreException;

/**
 * Turns any throwable into the response the client gets: an HttpErrorException with its status and headers,
 * anything else as a 500. The default page is HTML, JSON or plain text by the request's Accept; a
 * custom handler registered for the status replaces it.
 *
 * A StoreException (BusException included: shared state or the bus unreachable, e.g. Redis down) is a 503 with
 * Retry-After: 1. Production never discloses internals: another exception is "500 Internal Server Error" and nothing
 * more (its message may hold a path, a query, a secret). Debug mode adds class, message, file:line
 * and trace. Logging 5xx is the caller's job; a custom handler that fails is reported to $log.
 */
final class ErrorHandler
{
    /** @var array<int, \Closure> status => fn (Request, \Throwable): mixed */
    private array $handlers = [];

    /**
     * @param \Closure(string): void|null $log told when a custom handler fails (default: error_log())
     */
    public function __construct(
        private readonly bool $debug = false,
        private readonly ?\Closure $log = null,
    ) {}

    /**
     * A custom page for one status. The handler gets (Request, HttpErrorException|\Throwable); what it returns
     * becomes the response as a route's result does, with the error's status unless it returns a Response
     * or an int itself. A handler that throws gets the default page instead (and is not called again for
     * its own error).
     *
     * @param \Closure(Request, \Throwable): mixed $handler
     */
    public function onError(int $status, \Closure $handler): void
    {
        if ($status < 400 || $status > 599) {
            throw new \ValueError("onError() takes a 4xx or 5xx status, got $status");
        }
        $this->handlers[$status] = $handler;
    }

    /**
     * The response for what a request's handling threw: a client's bad body is its 4xx, a full task queue a 503
     * (counted as a refusal), anything else rendered as render() does; a 5xx carries the failure for the error log.
     */
    public function uncaught(\Throwable $error, Request $request): Response
    {
        if ($error instanceof BadRequestBodyException) {
            // The client's body was wrong (invalid JSON, malformed multipart, over a limit): its fault.
            $error = new HttpErrorException($error->status(), $error->getMessage(), [], $error);
        } elseif ($error instanceof TaskQueueFullException) {
            $error = HttpErrorException::serviceUnavailable(); // too much work queued: the client may retry
            $request->setAttribute(Request::REFUSED, 'task_queue');
        }
        $response = $this->render($error, $request);
        if (!$error instanceof HttpErrorException || $error->status >= 500) {
            $response->reportFailure($error);
        }
        return $response;
    }

    public function render(\Throwable $error, Request $request): Response
    {
        // The shared state or bus is unreachable (Redis down): the request may succeed again shortly.
        $unavailable = $error instanceof StoreException; // BusException is one too
        $status = $error instanceof HttpErrorException ? $error->status : ($unavailable ? 503 : 500);
        $handler = $this->handlers[$status] ?? null;
        $response = $handler === null ? null : $this->custom($handler, $status, $error, $request);
        if ($response === null) {
            $format = ErrorPageFormat::fromAccept(implode(', ', $request->headerValues('accept')));
            $message = $error instanceof HttpErrorException ? $error->getMessage() : ResponseEncoder::reason($status);
            $response = ErrorPage::render($format, $status, $message, $this->debug ? $error : null);
            $response->setHeader('Vary', 'Accept');
        }
        if ($error instanceof HttpErrorException) {
            foreach ($error->headers as $name => $value) {
                if (!$response->hasHeader($name)) {
                    $response->setHeader($name, $value);
                }
            }
        }
        if ($unavailable && !$response->hasHeader('Retry-After')) {
            $response->setHeader('Retry-After', '1');
        }
        return $response;
    }

    /** @param \Closure(Request, \Throwable): mixed $handler */
    private function custom(\Closure $handler, int $status, \Throwable $error, Request $request): ?Response
    {
        try {
            $result = $handler($request, $error);
            $response = Result::toResponse($result);
        } catch (\Throwable $failure) {
            $this->report("The onError($status) handler failed while rendering " . $error::class . ': '
                . $failure::class . ': ' . $failure->getMessage() . ' at ' . $failure->getFile() . ':' . $failure->getLine());
            return null;
        }
        if (!$result instanceof Response && !\is_int($result)) {
            $response->setStatus($status);
        }
        return $response;
    }

    private function report(string $message): void
    {
        if ($this->log !== null) {
            ($this->log)($message);
        } else {
            error_log('[kiln] ' . $message);
        }
    }
}
