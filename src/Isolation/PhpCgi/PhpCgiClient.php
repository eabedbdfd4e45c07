<?php

declare(strict_types=1);

namespace Kiln\Isolation\PhpCgi;

use Kiln\Isolation\FastCgi\FastCgiAddress;
use Kiln\Isolation\FastCgi\FastCgiClient;
use Kiln\Isolation\FastCgi\FastCgiException;
use Kiln\Isolation\FastCgi\FastCgiOptions;
use Kiln\Isolation\FastCgi\FastCgiTimeoutException;
use Kiln\Isolation\FastCgi\FastCgiUnavailableException;

/**
 * Sends one FastCGI request to the server's php-cgi pool (one socket) and hands back the exchange. A
 * connection whose answer ended while another request of this worker waited for the pool carries that request
 * next, if it may be sent twice (GET, HEAD and the other idempotent methods, with a body that can be
 * replayed), up to `reuse` requests in a row; every other request gets a connection of its own
 * (docs/design/027).
 *
 * Failures: PoolBusyException (503), PoolUnavailableException (502), FastCgiTimeoutException (504),
 * FastCgiException (502: a child that died during the request; php-cgi forks another). A socket that refuses
 * before it got a byte of the request (a parent that died: the supervisor has not told this worker yet) is tried once more.
 */
final class PhpCgiClient
{
    /** Seconds after its opening a connection takes no further request (it closes after the one it carries). */
    public const REUSE_SECONDS = 0.05;

    /**
     * Seconds an idle connection may stay open if onIdle() did not close it (a waiter that took another way):
     * a safety net, not the rule.
     */
    public const IDLE_TIMEOUT = 1.0;

    private readonly FastCgiClient $fastcgi;

    public function __construct(public readonly PhpCgiPool $pool)
    {
        $limit = $pool->options->timeLimit > 0 ? $pool->options->timeLimit : null;
        $this->fastcgi = new FastCgiClient(new FastCgiOptions(
            readTimeout: $limit ?? 1e9,
            requestTimeout: $limit,
            maxConnections: $pool->options->size,
            // A connection is kept only for a request of this worker that waits already (below), and for
            // at most `reuse` requests: no idle connection holds a child another worker's request needs.
            keepConnections: $pool->options->reuse > 1,
            maxRequestsPerConnection: $pool->options->reuse,
            // A connection carries requests back to back for a moment only: a request of another worker that
            // waits in the socket's backlog for a child gets one soon, slow pages or not.
            maxConnectionAge: self::REUSE_SECONDS,
            idleTimeout: self::IDLE_TIMEOUT,
            abortGrace: min(PhpCgiExchange::ABORT_GRACE, $limit ?? INF),
            // Not peeked at before use: a kept connection that a child closed as it reached
            // PHP_FCGI_MAX_REQUESTS is found when the request is written or read, and the request, which
            // that child never read, is sent again on a new connection (FastCgiClient's retry rule).
            checkIdleConnections: false,
            // A request that may not be sent twice never goes on a kept connection: the one place where a
            // child leaving by its limit could close it under the request.
            keepUnrepeatable: false,
            // php-cgi closes a connection on which it finds ABORT_REQUEST where the next request should start.
            reuseAfterAbort: false,
        ));
        $fastcgi = $this->fastcgi;
        $pool->onRetire(static function (FastCgiAddress $address) use ($fastcgi): void {
            $fastcgi->closeIdleConnections($address);
        });
        // Nothing of this worker waits for the pool: the idle connections go, so their children are free for
        // any worker (a php-cgi child serves one connection until it is closed).
        $pool->onIdle(static function () use ($fastcgi): void {
            $fastcgi->closeIdleConnections();
        });
    }

    /** @var array<string, self> by pool name: the clients create() made in this process */
    private static array $clients = [];

    /**
     * The client of the server's pool with these settings, asked for now (in a booting worker the ask goes
     * out once the worker serves). Asked twice in one worker with the same settings, it is the same client.
     */
    public static function create(PhpCgiOptions $options): self
    {
        $pool = new PhpCgiPool($options);
        if (isset(self::$clients[$pool->name])) {
            return self::$clients[$pool->name];
        }
        $pool->open();
        return self::$clients[$pool->name] = new self($pool);
    }

    /**
     * @param array<string, string> $params the CGI meta-variables
     * @param string|resource $body the request body (a stream is read from where it is)
     * @param (\Closure(string): void)|null $onStderr each STDERR line (PHP's logged errors); MUST NOT throw
     *
     * @throws PoolBusyException|PoolUnavailableException|FastCgiException
     */
    public function request(array $params, mixed $body = '', ?\Closure $onStderr = null): PhpCgiExchange
    {
        $start = \is_resource($body) ? @ftell($body) : false;
        for ($attempt = 1; ; $attempt++) {
            $lease = $this->pool->acquire();
            $address = $lease->address;
            try {
                $response = $this->fastcgi->request($address, $params, $body, $onStderr);
            } catch (FastCgiUnavailableException $e) {
                $this->pool->release($lease, false, $e->getMessage());
                // Sent again only from where the body started (the first try may have read some of a stream).
                if ($attempt === 1 && !$e->mayHaveRun && (\is_string($body) || ($start !== false && \is_resource($body) && @fseek($body, $start) === 0))) {
                    continue;
                }
                throw $e;
            } catch (FastCgiTimeoutException $e) {
                $this->pool->release($lease, false, "no answer within the time limit of {$this->pool->options->timeLimit} s");
                throw $e;
            } catch (\Throwable $e) {
                $this->pool->release($lease, false, $e->getMessage());
                throw $e;
            }
            return new PhpCgiExchange($response, $lease, $this->pool);
        }
    }
}
