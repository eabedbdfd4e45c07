<?php

declare(strict_types=1);

namespace Kiln\Isolation\FastCgi;

use Kiln\Isolation\FastCgi\Internal\AbortDrain;
use Kiln\Isolation\FastCgi\Internal\Connection;
use Kiln\Isolation\FastCgi\Internal\ConnectionLostException;
use Kiln\Isolation\FastCgi\Internal\ConnectionPool;
use Kiln\Isolation\FastCgi\Internal\Deadline;
use Kiln\Isolation\FastCgi\Internal\RequestWriter;
use Kiln\Isolation\FastCgi\Internal\StderrLines;
use Kiln\Loop\Cancellation;
use Kiln\Loop\CancelledException;

/**
 * The answer to one FastCGI request, read as it arrives. STDOUT comes out in the chunks the responder sent
 * (iterate, or call read()); STDERR goes to the request's callback, line by line, as it is met; END_REQUEST
 * ends the response. Nothing is read from the socket until asked for, so a slow reader slows the responder
 * down instead of filling memory.
 *
 * The connection goes back to the pool once END_REQUEST has been read. A response given up before that
 * (abort(), a cancelled read, an iteration left early, the object destroyed) sends ABORT_REQUEST.
 *
 * @implements \IteratorAggregate<int, string>
 */
final class FastCgiResponse implements \IteratorAggregate
{
    private const STDOUT = RecordType::Stdout->value;
    private const STDERR = RecordType::Stderr->value;
    private const END_REQUEST = RecordType::EndRequest->value;

    private bool $done = false;
    /** The END_REQUEST body of a completed request; its EndRequest is made only when asked for. */
    private ?string $end = null;
    /** Made at the first STDERR record (most responses have none). */
    private ?StderrLines $stderr = null;

    /** Which request of its connection this is (Connection::$requests when it started). */
    private readonly int $request;

    /**
     * @internal Returned by FastCgiClient::request().
     *
     * @param (\Closure(string): void)|null $onStderr
     */
    public function __construct(
        private readonly Connection $connection,
        private readonly ConnectionPool $pool,
        private readonly Deadline $deadline,
        private readonly ?\Closure $onStderr,
        private readonly ?Cancellation $cancellation,
        private readonly FastCgiOptions $options,
    ) {
        $this->request = $connection->requests;
    }

    /**
     * Whether this request is over on its connection: the connection went back to the pool or was closed (after
     * END_REQUEST, a failure, or abort() and its drain). A request given up is settled once the responder ended
     * it or the abort grace passed.
     */
    public function isSettled(): bool
    {
        return !$this->connection->busy || $this->connection->requests !== $this->request;
    }

    public function __destruct()
    {
        if (!$this->done) { // nearly every response is over by now: no call for it
            $this->abort();
        }
    }

    /**
     * The next STDOUT chunk (never ''), or null once END_REQUEST has been read.
     *
     * @throws FastCgiException for a broken response (the connection is closed), FastCgiUnavailableException when the
     *                          responder said it is overloaded, FastCgiTimeoutException, CancelledException (aborted)
     */
    public function read(): ?string
    {
        return $this->next(true);
    }

    /**
     * As read(), but never waits: '' when the next chunk has not arrived yet. E.g. to see whether a response
     * whose head just arrived is already complete, and send it with a Content-Length.
     *
     * @throws FastCgiException as read()
     */
    public function poll(): ?string
    {
        return $this->next(false);
    }

    private function next(bool $wait): ?string
    {
        while (!$this->done) {
            try {
                $content = $this->connection->decoder->nextContent($type, $requestId);
                if ($content === null) {
                    if ($wait) {
                        $this->connection->fill($this->deadline, $this->cancellation);
                    } elseif ($this->connection->readNow() === '') {
                        return '';
                    }
                    continue;
                }
            } catch (CancelledException $e) {
                $this->abort();
                throw $e;
            } catch (ConnectionLostException $e) {
                $this->fail();
                throw new FastCgiException("FastCGI responder {$this->connection->key} closed the connection before the end of the response: {$e->getMessage()}", 0, $e);
            } catch (\Throwable $e) {
                $this->fail();
                throw $e;
            }
            if ($requestId !== RequestWriter::REQUEST_ID) {
                $this->fail();
                throw new ProtocolException("FastCGI responder {$this->connection->key} sent a record (type {$type}) for request id {$requestId}, not " . RequestWriter::REQUEST_ID);
            }
            if ($type === self::STDOUT) {
                if ($content !== '') {
                    return $content;
                }
            } elseif ($type === self::STDERR) {
                if ($this->onStderr !== null) {
                    ($this->stderr ??= new StderrLines($this->onStderr, $this->options->maxStderrLine))->push($content);
                }
            } elseif ($type === self::END_REQUEST) {
                $this->finish($content);
            } else {
                $this->fail();
                throw new ProtocolException("FastCGI responder {$this->connection->key} sent an unexpected record of type {$type}");
            }
        }

        return null;
    }

    /**
     * Yields the STDOUT chunks as they arrive; leaving the loop early (or destroying the generator) aborts.
     *
     * @return \Generator<int, string>
     */
    public function getIterator(): \Generator
    {
        try {
            while (($chunk = $this->read()) !== null) {
                yield $chunk;
            }
        } finally {
            $this->abort();
        }
    }

    /**
     * The rest of STDOUT, read to the end into one string (for small answers; iterate for large ones).
     *
     * @throws FastCgiException as read() (also CancelledException)
     */
    public function body(): string
    {
        $body = '';
        while (($chunk = $this->read()) !== null) {
            $body .= $chunk;
        }

        return $body;
    }

    /**
     * Reads to END_REQUEST, dropping STDOUT not read yet, and returns it.
     *
     * @throws FastCgiException as read() (also CancelledException)
     */
    public function wait(): EndRequest
    {
        while ($this->read() !== null) {
        }

        return $this->endRequest() ?? throw new FastCgiException("The request to FastCGI responder {$this->connection->key} was aborted or failed before END_REQUEST");
    }

    /** Whether END_REQUEST was read (or the response was aborted or failed). */
    public function isComplete(): bool
    {
        return $this->done;
    }

    /** The END_REQUEST once read; null before, or when the response was aborted or failed. */
    public function endRequest(): ?EndRequest
    {
        return $this->end === null ? null : self::endRecord($this->end);
    }

    /**
     * Gives the request up (the client went away): sends ABORT_REQUEST and lets the responder's END_REQUEST
     * arrive in the background (then the connection is reused) for FastCgiOptions::$abortGrace seconds, or
     * closes the connection. Does nothing once the response is complete. Never suspends.
     */
    public function abort(): void
    {
        if ($this->done) {
            return;
        }
        $this->done = true;
        AbortDrain::start($this->connection, $this->pool, RequestWriter::REQUEST_ID, $this->options->abortGrace, $this->connection->keep && $this->options->reuseAfterAbort);
    }

    /**
     * @param string $content the END_REQUEST body (8 bytes: the decoder checked its length)
     *
     * @throws FastCgiException|FastCgiUnavailableException
     */
    private function finish(string $content): void
    {
        $this->done = true;
        $this->stderr?->flush();
        $reusable = $this->connection->keep && $this->connection->decoder->buffered() === 0;
        $reusable ? $this->pool->release($this->connection) : $this->pool->discard($this->connection);
        if ($content[4] === "\0") { // FCGI_REQUEST_COMPLETE
            $this->end = $content;

            return;
        }
        $end = self::endRecord($content);
        $status = $end->status();
        if ($status === ProtocolStatus::Overloaded || $status === ProtocolStatus::CantMpxConn) {
            throw new FastCgiUnavailableException("FastCGI responder {$this->connection->key} refused the request: {$status->name}", overloaded: true);
        }
        $what = $status === null ? "unknown protocol status {$end->protocolStatusId}" : $status->name;
        throw new FastCgiException("FastCGI responder {$this->connection->key} ended the request with {$what}");
    }

    private static function endRecord(string $content): EndRequest
    {
        return (new Record(self::END_REQUEST, RequestWriter::REQUEST_ID, $content))->endRequest();
    }

    private function fail(): void
    {
        $this->done = true;
        $this->pool->discard($this->connection);
    }
}
