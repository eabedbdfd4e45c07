<?php

declare(strict_types=1);

namespace Kiln\Http\Client\Internal;

use Kiln\Http\Client\ClientException;
use Kiln\Http\Client\ClientOptions;

use function Kiln\Loop\awaitReadable;
use function Kiln\Loop\awaitWritable;

use Kiln\Loop\Cancellation;
use Kiln\Loop\CancelledException;

/**
 * Opens connections without blocking the loop: asynchronous TCP connect, then a non-blocking TLS
 * handshake for https. Name resolution (getaddrinfo) inside stream_socket_client() does block.
 *
 * @internal
 */
final class Connector
{
    public function __construct(private readonly ClientOptions $options) {}

    public function connect(Url $url, Cancellation $cancellation): Connection
    {
        $address = "tcp://{$url->host}:{$url->port}";
        $context = \stream_context_create(['socket' => ['tcp_nodelay' => true], 'ssl' => $this->tlsOptions($url)]);
        $flags = \STREAM_CLIENT_CONNECT | \STREAM_CLIENT_ASYNC_CONNECT;
        $stream = @\stream_socket_client($address, $errno, $errstr, null, $flags, $context);
        if ($stream === false) {
            throw new ClientException("Connecting to {$url->authority()} failed: {$errstr} ({$errno})");
        }
        try {
            \stream_set_blocking($stream, false);
            awaitWritable($stream, $cancellation);
            if (@\stream_socket_get_name($stream, true) === false) {
                throw new ClientException("Connecting to {$url->authority()} failed: connection refused or unreachable");
            }
            if ($url->scheme === 'https') {
                $this->handshake($stream, $url, $cancellation);
            }
        } catch (ClientException | CancelledException $e) {
            \fclose($stream);
            throw $e;
        }

        return new Connection($stream, $url->origin(), $this->options->maxHeaderBytes);
    }

    /** @param resource $stream */
    private function handshake(mixed $stream, Url $url, Cancellation $cancellation): void
    {
        while (true) {
            \error_clear_last();
            $done = @\stream_socket_enable_crypto($stream, true, \STREAM_CRYPTO_METHOD_TLS_CLIENT);
            if ($done === true) {
                return;
            }
            if ($done === false) {
                $reason = \error_get_last()['message'] ?? 'handshake failed';
                throw new ClientException("TLS handshake with {$url->authority()} failed: {$reason}");
            }
            // 0: the handshake needs the peer's next flight; our own writes go to the kernel buffer.
            awaitReadable($stream, $cancellation);
        }
    }

    /** @return array<string, mixed> */
    private function tlsOptions(Url $url): array
    {
        $options = [
            'peer_name' => $url->bareHost(),
            'SNI_enabled' => true,
            'verify_peer' => $this->options->verifyPeer,
            'verify_peer_name' => $this->options->verifyPeer,
            'allow_self_signed' => false,
        ];
        if ($this->options->cafile !== null) {
            $options['cafile'] = $this->options->cafile;
        }
        if ($this->options->capath !== null) {
            $options['capath'] = $this->options->capath;
        }

        return $options;
    }
}
