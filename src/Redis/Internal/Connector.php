<?php

declare(strict_types=1);

namespace Kiln\Redis\Internal;

use function Kiln\Loop\awaitReadable;
use function Kiln\Loop\awaitWritable;

use Kiln\Loop\CancelledException;
use Kiln\Loop\TimeoutCancellation;
use Kiln\Redis\ConnectException;
use Kiln\Redis\Endpoint;
use Kiln\Redis\RedisConfig;
use Kiln\Redis\RedisException;
use Kiln\Redis\Resp\RespParser;

/**
 * Opens a Connection without blocking the loop: asynchronous connect, non-blocking TLS handshake,
 * then the greeting (HELLO or AUTH, SELECT, CLIENT SETNAME) pipelined in one write. Every step is
 * bounded by the connect timeout. Name resolution inside stream_socket_client() does block.
 *
 * @internal
 */
final class Connector
{
    private function __construct() {}

    /**
     * @param (\Closure(mixed): void)|null $onOutOfBand
     * @param (\Closure(Connection): void)|null $onClose
     */
    public static function connect(RedisConfig $config, Endpoint $endpoint, ?\Closure $onOutOfBand = null, ?\Closure $onClose = null): Connection
    {
        $stream = self::open($config, $endpoint);
        $connection = new Connection($stream, (string) $endpoint, $config->commandTimeout, new RespParser(), $onOutOfBand, $onClose);
        $greeting = Greeting::commands($config);
        if ($greeting !== []) {
            try {
                $replies = $connection->pipeline($greeting, $config->connectTimeout);
            } catch (RedisException $e) {
                $connection->close($e);
                throw new ConnectException("Greeting Redis at $endpoint failed: {$e->getMessage()}", 0, $e);
            }
            $problem = Greeting::problem($replies);
            if ($problem !== null) {
                $connection->close(new ConnectException($problem));
                throw new ConnectException("Redis at $endpoint refused the connection: $problem");
            }
        }

        return $connection;
    }

    /** @return resource connected, TLS ready, non-blocking */
    public static function open(RedisConfig $config, Endpoint $endpoint): mixed
    {
        $context = stream_context_create(['socket' => ['tcp_nodelay' => true], 'ssl' => self::tlsOptions($config, $endpoint)]);
        $stream = @stream_socket_client($endpoint->uri(), $errno, $error, null, \STREAM_CLIENT_CONNECT | \STREAM_CLIENT_ASYNC_CONNECT, $context);
        if ($stream === false) {
            throw new ConnectException("Connecting to Redis at $endpoint failed: $error ($errno)");
        }
        $cancellation = new TimeoutCancellation($config->connectTimeout, "Connecting to Redis at $endpoint timed out after {$config->connectTimeout} s");
        try {
            stream_set_blocking($stream, false);
            awaitWritable($stream, $cancellation);
            if (!$endpoint->isUnix() && @stream_socket_get_name($stream, true) === false) {
                throw new ConnectException("Connecting to Redis at $endpoint failed: connection refused or unreachable");
            }
            if ($config->tls) {
                while (true) {
                    error_clear_last();
                    $done = @stream_socket_enable_crypto($stream, true, \STREAM_CRYPTO_METHOD_TLS_CLIENT);
                    if ($done === true) {
                        break;
                    }
                    if ($done === false) {
                        throw new ConnectException("TLS handshake with Redis at $endpoint failed: " . (error_get_last()['message'] ?? 'unknown error'));
                    }
                    awaitReadable($stream, $cancellation);
                }
            }
        } catch (CancelledException $e) {
            fclose($stream);
            throw new ConnectException($e->getMessage(), 0, $e);
        } catch (ConnectException $e) {
            fclose($stream);
            throw $e;
        }

        return $stream;
    }

    /** @return array<string, mixed> */
    private static function tlsOptions(RedisConfig $config, Endpoint $endpoint): array
    {
        $options = [
            'peer_name' => $endpoint->host,
            'SNI_enabled' => true,
            'verify_peer' => $config->verifyPeer,
            'verify_peer_name' => $config->verifyPeer,
        ];
        if ($config->cafile !== null) {
            $options['cafile'] = $config->cafile;
        }

        return $options;
    }
}
