<?php

declare(strict_types=1);

namespace Kiln\Isolation\Fork;

use Kiln\Isolation\Cgi\CgiHead;
use Kiln\Isolation\Cgi\CgiResponseException;
use Kiln\Isolation\Cgi\CgiResponseParser;
use Kiln\Isolation\Cgi\CgiResponseStream;
use Kiln\Isolation\Cgi\CgiTimeoutException;
use Kiln\Loop\CancelledException;

use function Kiln\Loop\read;

use Kiln\Loop\StreamException;
use Kiln\Loop\TimeoutCancellation;

/**
 * The CGI response of one forked request, read from its connection as the child writes it: head() once,
 * then body(). Past the time limit both throw CgiTimeoutException; a child that died before a complete
 * header block (crash, kill) makes head() throw CgiResponseException. Closing the connection early
 * (abort(), the body generator destroyed before its end) makes the fork server kill the child.
 */
final class ForkResponse
{
    private readonly CgiResponseStream $stream;

    /**
     * @internal ForkServerProcess::send() makes it.
     *
     * @param resource $socket
     */
    public function __construct(private mixed $socket, private readonly TimeoutCancellation $deadline)
    {
        $this->stream = new CgiResponseStream(new CgiResponseParser());
    }

    public function __destruct()
    {
        $this->abort();
    }

    /** @throws CgiResponseException|CgiTimeoutException */
    public function head(): CgiHead
    {
        return $this->stream->head($this->read(...), $this->abort(...));
    }

    /**
     * @return \Generator<int, string>
     *
     * @throws CgiTimeoutException
     */
    public function body(): \Generator
    {
        // At the end of the output too the connection is closed: nothing more comes on it.
        return $this->stream->body('ForkResponse', $this->read(...), $this->abort(...), $this->abort(...));
    }

    /** Closes the connection (the fork server then kills the child if it still runs). */
    public function abort(): void
    {
        if (\is_resource($this->socket)) {
            \fclose($this->socket);
        }
    }

    /** @throws CgiTimeoutException */
    private function read(): ?string
    {
        if (!\is_resource($this->socket)) {
            return null;
        }
        try {
            return read($this->socket, 65536, $this->deadline);
        } catch (CancelledException $e) {
            $this->abort();
            throw new CgiTimeoutException($e->getMessage(), 0, $e);
        } catch (StreamException) {
            return null;
        }
    }
}
