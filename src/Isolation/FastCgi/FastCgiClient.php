<?php

declare(strict_types=1);

namespace Kiln\Isolation\FastCgi;

use Kiln\Isolation\FastCgi\Internal\AbortDrain;
use Kiln\Isolation\FastCgi\Internal\Connection;
use Kiln\Isolation\FastCgi\Internal\ConnectionLostException;
use Kiln\Isolation\FastCgi\Internal\ConnectionPool;
use Kiln\Isolation\FastCgi\Internal\Connector;
use Kiln\Isolation\FastCgi\Internal\Deadline;
use Kiln\Isolation\FastCgi\Internal\RequestWriter;
use Kiln\Isolation\FastCgi\Internal\Timeouts;
use Kiln\Loop\Cancellation;
use Kiln\Loop\CancelledException;
use Kiln\Loop\Loop;

/**
 * Non-blocking FastCGI client (role RESPONDER) for code on the Kiln loop: every wait suspends the calling
 * Fiber (or runs the loop, in {main}), never the worker. Many Fibers may share one client; each request has
 * a connection of its own (no multiplexing), taken from a pool of kept connections (FCGI_KEEP_CONN) per
 * responder address.
 *
 * Failures:
 * - cannot connect, or the responder closes the connection before answering anything: FastCgiUnavailableException
 *   (answer 502); END_REQUEST "overloaded" / "cannot multiplex": FastCgiUnavailableException with $overloaded (503);
 * - the connect, a wait for the responder or the whole request takes longer than FastCgiOptions allows:
 *   FastCgiTimeoutException, the connection is closed (answer 504; a pool owning the responder kills it);
 * - the responder breaks the protocol, or closes the connection mid-response: FastCgiException;
 * - $cancellation requested: ABORT_REQUEST is sent (see FastCgiResponse::abort()), CancelledException thrown.
 *
 * Retry: an idle kept connection is checked before it is used, and one the responder closed is replaced
 * without sending anything on it. After that, a request is sent once more, on a new connection, only if the
 * kept connection failed before a byte of the answer arrived, the body can be replayed (a string, or a
 * seekable stream), and either not a byte of the request was accepted by the socket, or the request is
 * idempotent (REQUEST_METHOD GET, HEAD, OPTIONS, TRACE, PUT, DELETE). A request that may have run is never
 * sent twice otherwise. Without FastCgiOptions::$keepUnrepeatable, only those requests go on kept
 * connections at all; the others get a new connection each, closed after them.
 */
final class FastCgiClient
{
    private const IDEMPOTENT = ['GET', 'HEAD', 'OPTIONS', 'TRACE', 'PUT', 'DELETE'];

    private readonly ConnectionPool $pool;
    private readonly Timeouts $timeouts;

    public function __construct(private readonly FastCgiOptions $options = new FastCgiOptions())
    {
        $this->pool = new ConnectionPool($options->maxConnections, $options->idleTimeout, $options->checkIdleConnections);
        $this->timeouts = new Timeouts();
    }

    /** A client dropped lets its idle connections go at once (each may hold a worker of the responder). */
    public function __destruct()
    {
        $this->pool->close();
        $this->timeouts->close();
    }

    /**
     * Sends a request and returns once the first bytes of the answer have arrived; read the STDOUT stream
     * from the returned FastCgiResponse.
     *
     * @param array<string, string> $params the CGI meta-variables (e.g. Kiln\Site\CgiParams::build())
     * @param string|resource|iterable<string> $body STDIN: a string, a readable stream read from where it
     *                                               is now (a seekable one can be replayed on retry), or pieces
     * @param (\Closure(string): void)|null $onStderr called with each STDERR line; it MUST NOT throw
     *
     * @throws FastCgiUnavailableException|FastCgiTimeoutException|FastCgiException|CancelledException
     */
    public function request(FastCgiAddress $address, array $params, mixed $body = '', ?\Closure $onStderr = null, ?Cancellation $cancellation = null): FastCgiResponse
    {
        if (!\is_string($body) && !\is_resource($body) && !\is_iterable($body)) {
            throw new \TypeError('The FastCGI request body must be a string, a readable stream or an iterable of strings, got ' . \get_debug_type($body));
        }
        $key = $address->toString();
        $deadline = new Deadline($key, $this->options->readTimeout, $this->options->requestTimeout);
        $start = \is_resource($body) ? @\ftell($body) : false;
        $idempotent = \in_array(\strtoupper($params['REQUEST_METHOD'] ?? ''), self::IDEMPOTENT, true);
        $keep = $this->options->keepConnections;
        if ($keep && !$this->options->keepUnrepeatable) {
            $keep = $idempotent && (\is_string($body) || ($start !== false && \stream_get_meta_data($body)['seekable']));
        }
        // A request not kept goes on a new connection: one the responder may close as it leaves is never used for it.
        $fresh = !$keep;
        $retried = false;
        while (true) {
            try {
                $connection = ($fresh ? null : $this->pool->reuse($key)) ?? $this->pool->acquire(
                    $key,
                    fn(): Connection => Connector::connect($address, \min($this->options->connectTimeout, $deadline->next()), $cancellation, $this->timeouts),
                    $deadline,
                    $cancellation,
                    $fresh,
                );
            } catch (FastCgiUnavailableException $e) {
                // The retry's connection failed; the first attempt may have run all the same.
                throw $retried && !$e->mayHaveRun ? new FastCgiUnavailableException($e->getMessage(), mayHaveRun: true, previous: $e) : $e;
            }
            // The last request a connection may carry asks the responder to close it after the answer.
            $connection->startRequest($keep && ($this->options->maxRequestsPerConnection === 0
                || $connection->requests + 1 < $this->options->maxRequestsPerConnection)
                && ($this->options->maxConnectionAge <= 0.0 || Loop::now() - $connection->openedAt < $this->options->maxConnectionAge));
            try {
                RequestWriter::send($connection, $params, $body, $connection->keep, $deadline, $cancellation);
                // The responder cannot have answered a request it was just sent: wait before the first read.
                $connection->fill($deadline, $cancellation, readFirst: false);
            } catch (ConnectionLostException $e) {
                $this->pool->discard($connection);
                $retry = !$retried && $connection->requests > 1 && $connection->received === 0
                    && ($connection->written === 0 || $idempotent)
                    && (\is_string($body) || ($start !== false && \is_resource($body) && @\fseek($body, $start) === 0));
                if ($retry) {
                    $fresh = $retried = true;
                    continue;
                }
                throw new FastCgiUnavailableException(
                    "FastCGI responder {$address} closed the connection without answering: {$e->getMessage()}",
                    mayHaveRun: $connection->written > 0,
                    previous: $e,
                );
            } catch (CancelledException $e) {
                $this->abandon($connection);
                throw $e;
            } catch (\Throwable $e) {
                $this->pool->discard($connection);
                throw $e;
            }

            return new FastCgiResponse($connection, $this->pool, $deadline, $onStderr, $cancellation, $this->options);
        }
    }

    /**
     * Closes the idle kept connections (e.g. at shutdown), or only those to $address (e.g. a responder about
     * to be stopped); busy ones close when their requests end.
     */
    public function closeIdleConnections(?FastCgiAddress $address = null): void
    {
        $this->pool->closeIdle($address?->toString());
    }

    /** Connections open to $address now, busy or idle. */
    public function openConnections(FastCgiAddress $address): int
    {
        return $this->pool->openCount($address->toString());
    }

    /** Idle kept connections to $address now. */
    public function idleConnections(FastCgiAddress $address): int
    {
        return $this->pool->idleCount($address->toString());
    }

    /** Connections this client has opened since it was made (to see how well they are reused). */
    public function openedConnections(): int
    {
        return $this->pool->openedCount();
    }

    private function abandon(Connection $connection): void
    {
        AbortDrain::start($connection, $this->pool, RequestWriter::REQUEST_ID, $this->options->abortGrace, $connection->keep && $this->options->reuseAfterAbort);
    }
}
