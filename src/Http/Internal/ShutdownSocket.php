<?php

declare(strict_types=1);

namespace Kiln\Http\Internal;

/**
 * Blocking writes and graceful closes for a process that is ending: the loop no longer runs, so each
 * socket is switched to blocking mode and written with a deadline.
 *
 * @internal used by FatalGuard
 */
final class ShutdownSocket
{
    /**
     * Writes all of $bytes before $deadline (microtime), then closes gracefully.
     *
     * @param resource $socket
     */
    public static function answer(mixed $socket, string $bytes, float $deadline): bool
    {
        if (!self::write($socket, $bytes, $deadline)) {
            @fclose($socket);
            return false;
        }
        self::close($socket);
        return true;
    }

    /** @param resource $socket */
    public static function write(mixed $socket, string $bytes, float $deadline): bool
    {
        if (!\is_resource($socket)) {
            return false;
        }
        stream_set_blocking($socket, true);
        while ($bytes !== '') {
            $left = $deadline - microtime(true);
            if ($left <= 0) {
                return false;
            }
            stream_set_timeout($socket, (int) $left, (int) (fmod($left, 1.0) * 1e6));
            $written = @fwrite($socket, $bytes);
            if ($written === false || $written === 0) {
                return false;
            }
            $bytes = (string) substr($bytes, $written);
        }
        return true;
    }

    /**
     * Half-closes, takes what the client already sent, then closes: a close with unread bytes would turn
     * into a reset that can destroy the answer before the client reads it.
     *
     * @param resource $socket
     */
    public static function close(mixed $socket): void
    {
        if (!\is_resource($socket)) {
            return;
        }
        @stream_socket_shutdown($socket, STREAM_SHUT_WR);
        stream_set_blocking($socket, false);
        for ($i = 0; $i < 16; $i++) {
            $data = @fread($socket, 65536);
            if ($data === false || $data === '') {
                break;
            }
        }
        @fclose($socket);
    }
}
