<?php

declare(strict_types=1);

namespace Kiln\Isolation\Cgi;

/**
 * A CGI response read as it arrives, over whatever carries it: the header block first, then the body. The
 * reading side of CgiProcess (a script's stdout) and ForkResponse (a forked child's connection).
 *
 * - head() feeds chunks to the parser until the header block is complete (end() at the end of the output);
 *   a malformed or missing block, or a timeout, aborts and is rethrown.
 * - body() yields the body bytes that came with the head, then every later chunk. At the end of the output
 *   it calls $ended; destroyed or failed before that end, it aborts.
 *
 * The owner's reads and abort are passed to each call rather than kept: an owner handing in its own
 * methods would otherwise be in a reference cycle with this object, and no longer be destroyed (and its
 * destructor no longer abort) as soon as it is dropped.
 */
final class CgiResponseStream
{
    public function __construct(private readonly CgiResponseParser $parser) {}

    /**
     * @param \Closure(): ?string $read the next chunk, null at the end of the output
     * @param \Closure(): void $abort
     *
     * @throws CgiResponseException|CgiTimeoutException
     */
    public function head(\Closure $read, \Closure $abort): CgiHead
    {
        $head = $this->parser->head();
        try {
            while ($head === null) {
                $chunk = $read();
                $head = $chunk === null ? $this->parser->end() : $this->parser->feed($chunk);
            }
        } catch (CgiResponseException|CgiTimeoutException $e) {
            $abort();
            throw $e;
        }

        return $head;
    }

    /**
     * Call after head(); $owner names the caller in the error thrown otherwise.
     *
     * @param \Closure(): ?string $read the next chunk, null at the end of the output
     * @param \Closure(): void $abort
     * @param \Closure(): void $ended called once the output has ended
     *
     * @return \Generator<int, string>
     *
     * @throws CgiTimeoutException
     */
    public function body(string $owner, \Closure $read, \Closure $abort, \Closure $ended): \Generator
    {
        if ($this->parser->head() === null) {
            throw new \Error("{$owner}::body() comes after head()");
        }
        $complete = false;
        try {
            $first = $this->parser->body();
            if ($first !== '') {
                yield $first;
            }
            while (($chunk = $read()) !== null) {
                yield $chunk;
            }
            $complete = true;
            $ended();
        } finally {
            if (!$complete) {
                $abort();
            }
        }
    }
}
