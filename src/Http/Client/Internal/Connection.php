<?php

declare(strict_types=1);

namespace Kiln\Http\Client\Internal;

use Kiln\Http\Client\ClientException;

use function Kiln\Loop\awaitReadable;
use function Kiln\Loop\awaitWritable;

use Kiln\Loop\Cancellation;

/**
 * One non-blocking client socket (plain or TLS) and the parser of its responses.
 *
 * @internal
 */
final class Connection
{
    private const READ_SIZE = 65536;

    public readonly ResponseParser $parser;
    /** Requests started on this connection; > 1 means it came from the pool. */
    public int $requests = 0;
    /** Bytes written and read for the current request (decides whether a retry is safe). */
    public int $written = 0;
    public int $received = 0;
    /** Timer that evicts this connection while it is idle in the pool. */
    public ?string $idleTimer = null;

    /** @param resource $stream non-blocking, connected */
    public function __construct(
        private readonly mixed $stream,
        public readonly string $origin,
        int $maxHeaderBytes,
    ) {
        $this->parser = new ResponseParser($maxHeaderBytes);
    }

    public function startRequest(string $method): void
    {
        $this->requests++;
        $this->written = 0;
        $this->received = 0;
        $this->parser->begin($method);
    }

    public function write(string $bytes, ?Cancellation $cancellation): void
    {
        while ($bytes !== '') {
            \error_clear_last();
            $n = @\fwrite($this->stream, $bytes);
            if ($n === false || ($n === 0 && $this->isClosed())) {
                throw new ClientException('Writing the request failed: ' . (\error_get_last()['message'] ?? 'connection closed'));
            }
            $this->written += $n;
            $bytes = (string) \substr($bytes, $n);
            if ($bytes !== '') {
                awaitWritable($this->stream, $cancellation);
            }
        }
    }

    /** Feeds the parser with the next bytes (or EOF), suspending until some arrive. */
    public function fill(?Cancellation $cancellation): void
    {
        while (true) {
            // Read before waiting: a TLS stream may hold decrypted bytes that select() cannot see.
            $bytes = @\fread($this->stream, self::READ_SIZE);
            if ($bytes === false) {
                throw new ClientException('Reading the response failed: ' . (\error_get_last()['message'] ?? 'unknown error'));
            }
            if ($bytes !== '') {
                $this->received += \strlen($bytes);
                $this->parser->feed($bytes);

                return;
            }
            if ($this->isClosed()) {
                $this->parser->close();

                return;
            }
            awaitReadable($this->stream, $cancellation);
        }
    }

    /** An idle connection is usable if the server has neither closed it nor sent unsolicited bytes. */
    public function isUsable(): bool
    {
        if ($this->isClosed() || $this->parser->buffered() > 0) {
            return false;
        }
        $bytes = @\fread($this->stream, 1);

        return $bytes === '' && !\feof($this->stream);
    }

    public function close(): void
    {
        if (\is_resource($this->stream)) {
            \fclose($this->stream);
        }
    }

    private function isClosed(): bool
    {
        return !\is_resource($this->stream) || \feof($this->stream);
    }
}
