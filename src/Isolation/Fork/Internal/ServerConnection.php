<?php

declare(strict_types=1);

namespace Kiln\Isolation\Fork\Internal;

use Kiln\Isolation\Fork\ScgiRequestParser;

/**
 * @internal One client connection of the fork server: reading its SCGI request, then its child's lifetime.
 */
final class ServerConnection
{
    public readonly ScgiRequestParser $parser;

    /** @var resource|null the request body, spooled */
    public mixed $body = null;

    public ?int $child = null;

    /** When the child gets SIGTERM: the time limit, or at once when the client has gone. */
    public float $deadline = \INF;

    public ?float $termSent = null;

    /** Bytes the server itself still has to write (its own error responses). */
    public string $output = '';

    public bool $closeWhenWritten = false;

    /** @param resource $socket */
    public function __construct(public readonly mixed $socket)
    {
        $this->parser = new ScgiRequestParser();
    }

    public function close(): void
    {
        if (\is_resource($this->socket)) {
            \fclose($this->socket);
        }
        if (\is_resource($this->body)) {
            \fclose($this->body);
        }
        $this->body = null;
    }
}
