<?php

declare(strict_types=1);

namespace Kiln\Tests\Support;

/**
 * What the raw test clients (RawClient, StrictHttp, RawWebSocket) do alike with their socket: open a
 * non-blocking TCP connection, and write all of some bytes before a deadline.
 *
 * @internal
 */
final class ClientSocket
{
    /** @return resource */
    public static function connect(string $host, int $port, float $timeout): mixed
    {
        $socket = @stream_socket_client("tcp://$host:$port", $errno, $error, $timeout);
        if ($socket === false) {
            throw new \RuntimeException("connect to $host:$port failed: $error");
        }
        stream_set_blocking($socket, false);

        return $socket;
    }

    /**
     * Writes every byte, waiting while the socket is full; throws when the server closed the connection or
     * $timeout passed first.
     *
     * @param resource $socket
     */
    public static function write(mixed $socket, string $bytes, float $timeout): void
    {
        $deadline = microtime(true) + $timeout;
        while ($bytes !== '') {
            $written = @fwrite($socket, $bytes);
            if ($written === false) {
                throw new \RuntimeException('write failed (the server closed the connection?)');
            }
            $bytes = substr($bytes, $written);
            if ($bytes === '') {
                return;
            }
            $left = $deadline - microtime(true);
            if ($left <= 0) {
                throw new \RuntimeException('write timed out');
            }
            $r = $e = null;
            $w = [$socket];
            @stream_select($r, $w, $e, 0, (int) (min($left, 0.05) * 1e6));
        }
    }
}
