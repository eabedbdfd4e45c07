<?php

declare(strict_types=1);

namespace Kiln\Http\Internal;

use Kiln\Loop\Loop;

/**
 * Closes a connection the server gave up on (a 413 or 400 sent while the client was still sending, the last
 * response of a connection) without losing that response: the sending side is shut down at once (the client
 * sees the end of the response), and whatever the client still sends is read and thrown away until it closes
 * too, stays silent for a second, or $timeout seconds have passed. Closing outright with unread bytes in the
 * socket makes the kernel answer with a reset, and a client still uploading may never read the response
 * (nginx's lingering close, for the same reason).
 *
 * The watchers are unreferenced: a lingering socket never keeps a stopping worker alive.
 *
 * @internal
 */
final class LingeringClose
{
    /** Seconds without a byte from the client after which the socket is closed anyway. */
    private const IDLE = 1.0;

    private string $readId;

    private string $timerId;

    private float $quietSince;

    private readonly float $deadline;

    /** @param resource $socket */
    private function __construct(private readonly mixed $socket, float $timeout)
    {
        $this->quietSince = Loop::now();
        $this->deadline = $this->quietSince + $timeout;
        $this->readId = Loop::onReadable($socket, $this->discard(...));
        $this->timerId = Loop::repeat(min(self::IDLE, $timeout) / 4, function (): void {
            $now = Loop::now();
            if ($now - $this->quietSince >= self::IDLE || $now >= $this->deadline) {
                $this->close();
            }
        });
        Loop::unreference($this->readId);
        Loop::unreference($this->timerId);
    }

    /** @param resource $socket an open, non-blocking socket whose pending output was all written */
    public static function start(mixed $socket, float $timeout): void
    {
        if (!\is_resource($socket) || @stream_socket_shutdown($socket, STREAM_SHUT_WR) === false) {
            @fclose($socket);
            return;
        }
        new self($socket, $timeout);
    }

    private function discard(): void
    {
        for ($i = 0; $i < 16; $i++) {
            $data = @fread($this->socket, 65536);
            if ($data === false || ($data === '' && feof($this->socket))) {
                $this->close();
                return;
            }
            if ($data === '') {
                return;
            }
            $this->quietSince = Loop::now();
        }
    }

    private function close(): void
    {
        Loop::cancel($this->readId);
        Loop::cancel($this->timerId);
        @fclose($this->socket);
    }
}
