<?php

declare(strict_types=1);

namespace Kiln\Http\Client;

use Kiln\Http\Client\Internal\BodyReader;
use Kiln\Http\Client\Internal\Connection;
use Kiln\Http\Client\Internal\ConnectionPool;
use Kiln\Http\Client\Internal\Connector;
use Kiln\Http\Client\Internal\RequestWriter;
use Kiln\Http\Client\Internal\ResponseHead;
use Kiln\Loop\Cancellation;
use Kiln\Loop\CancelledException;
use Kiln\Loop\CompositeCancellation;
use Kiln\Loop\TimeoutCancellation;

/**
 * Non-blocking HTTP/1.1 client for code running on the Kiln loop: every wait suspends the calling
 * Fiber (or runs the loop, in {main}), never the worker. Many Fibers may share one client; their
 * requests overlap and reuse keep-alive connections from one pool.
 *
 * Retries: a pooled connection the server closed while idle is detected before writing and replaced.
 * If a reused connection fails after the request was written but before any response byte arrived
 * (the server closed it in the meantime), the request is sent once more on a new connection only when
 * nothing was written yet, or when it is idempotent (GET, HEAD, OPTIONS, TRACE, PUT, DELETE) with a
 * string body. Nothing else is ever resent.
 */
final class HttpClient
{
    private const REDIRECTS = [301, 302, 303, 307, 308];

    private readonly ConnectionPool $pool;
    private readonly Connector $connector;

    public function __construct(private readonly ClientOptions $options = new ClientOptions())
    {
        $this->pool = new ConnectionPool($options->maxConnectionsPerHost, $options->idleTimeout);
        $this->connector = new Connector($options);
    }

    /** @param array<string, string|list<string>> $headers */
    public function get(string $url, array $headers = []): ClientResponse
    {
        return $this->request(new ClientRequest('GET', $url, $headers));
    }

    /** @param array<string, string|list<string>> $headers */
    public function post(string $url, string $body, array $headers = []): ClientResponse
    {
        return $this->request(new ClientRequest('POST', $url, $headers, $body));
    }

    /**
     * Sends $request and returns once the response head has arrived.
     *
     * @throws ClientException on connect, TLS, protocol or I/O failure
     * @throws \Kiln\Loop\TimeoutException after the connect or total timeout (the connection is closed)
     * @throws CancelledException when $cancellation is requested
     */
    public function request(ClientRequest $request, ?Cancellation $cancellation = null): ClientResponse
    {
        $seconds = $request->timeout() ?? $this->options->timeout;
        $timeout = new TimeoutCancellation($seconds, "Request to {$request->url()} timed out after {$seconds} s");
        $cancellation = $cancellation === null ? $timeout : new CompositeCancellation($cancellation, $timeout);
        for ($redirects = 0; ; $redirects++) {
            $response = $this->send($request, $cancellation);
            $next = $this->redirectFor($request, $response);
            if ($next === null) {
                return $response;
            }
            if ($redirects >= $this->options->maxRedirects) {
                $response->discard();
                throw new ClientException("Too many redirects (more than {$this->options->maxRedirects}) from {$request->url()}");
            }
            try {
                $response->body(); // drain it so the connection can be reused
            } catch (ClientException) {
            }
            $request = $next;
        }
    }

    /** Closes the idle pooled connections (e.g. between requests of a worker, or at shutdown). */
    public function closeIdleConnections(): void
    {
        $this->pool->closeIdle();
    }

    private function send(ClientRequest $request, Cancellation $cancellation): ClientResponse
    {
        $url = $request->parsedUrl();
        $connect = function () use ($url, $cancellation): Connection {
            $limit = $this->options->connectTimeout;
            $timeout = new TimeoutCancellation($limit, "Connecting to {$url->authority()} timed out after {$limit} s");

            return $this->connector->connect($url, new CompositeCancellation($cancellation, $timeout));
        };
        $fresh = false;
        while (true) {
            $connection = $this->pool->acquire($url->origin(), $connect, $cancellation, $fresh);
            try {
                $head = $this->exchange($connection, $request, $cancellation);
            } catch (ClientException $e) {
                $this->pool->discard($connection);
                $mayRetry = !$fresh && $connection->requests > 1 && $connection->received === 0
                    && ($connection->written === 0 || $request->isRetryable());
                if ($mayRetry) {
                    $fresh = true;
                    continue;
                }
                throw $e;
            } catch (\Throwable $e) {
                $this->pool->discard($connection);
                throw $e;
            }
            $reader = new BodyReader($connection, $this->pool, $cancellation);

            return new ClientResponse($head, $reader, $this->options->maxBodyBytes, $request->url());
        }
    }

    /** Writes the request and reads up to the end of the response head. */
    private function exchange(Connection $connection, ClientRequest $request, Cancellation $cancellation): ResponseHead
    {
        $connection->startRequest($request->method());
        $head = RequestWriter::head($request, $this->options->headers);
        $body = $request->body();
        if (\is_string($body)) {
            $connection->write($head . $body, $cancellation);
        } else {
            $connection->write($head, $cancellation);
            foreach ($body as $piece) {
                if ($piece !== '') {
                    $connection->write(RequestWriter::chunk($piece), $cancellation);
                }
            }
            $connection->write(RequestWriter::lastChunk(), $cancellation);
        }
        while (($event = $connection->parser->next()) === null) {
            $connection->fill($cancellation);
        }
        if (!$event instanceof ResponseHead) {
            throw new \LogicException('The parser yields a head before any body');
        }

        return $event;
    }

    private function redirectFor(ClientRequest $request, ClientResponse $response): ?ClientRequest
    {
        $location = $response->header('location');
        if ($this->options->maxRedirects === 0 || $location === null || !\in_array($response->status(), self::REDIRECTS, true)) {
            return null;
        }
        $method = $request->method();
        $body = $request->body();
        $headers = $request->headers();
        $status = $response->status();
        if ($status === 303 ? $method !== 'HEAD' : ($status <= 302 && $method === 'POST')) {
            [$method, $body] = ['GET', ''];
            $headers = \array_filter($headers, static fn(string $n): bool => !\in_array(\strtolower($n), ['content-type', 'content-length'], true), \ARRAY_FILTER_USE_KEY);
        } elseif (!\is_string($body)) {
            return null; // a streamed body cannot be sent again: hand the 3xx to the caller
        }
        try {
            $target = $request->parsedUrl()->resolve($location);
        } catch (\ValueError $e) {
            throw new ClientException("Invalid redirect Location \"{$location}\" from {$request->url()}", 0, $e);
        }
        if ($target->origin() !== $request->parsedUrl()->origin()) {
            $private = ['authorization', 'cookie', 'proxy-authorization'];
            $headers = \array_filter($headers, static fn(string $n): bool => !\in_array(\strtolower($n), $private, true), \ARRAY_FILTER_USE_KEY);
        }

        return new ClientRequest($method, $target->toString(), $headers, $body, $request->timeout());
    }
}
