<?php

declare(strict_types=1);

namespace Kiln\Store;

use Kiln\Loop\Loop;
use Kiln\Server\RelayFrames;
use Kiln\Store\Internal\BusMessage;
use Kiln\Store\Internal\GatewayConnection;

/**
 * Where scripts of other processes publish on a worker's bus: the php-cgi children of the isolated tier
 * and the forked children of the fork tier (see Publish::to(), the client). A unix socket, mode 0600, in a
 * directory of its own, mode 0700: only processes of the server's user can reach it, and no HTTP client
 * can. The first frame on a connection is the token (32 random bytes, hex), then each frame is one message
 * (Internal\BusMessage); the gateway answers each with one frame, empty once the message was published,
 * or the reason it was not (the BusException's message). A wrong token closes the connection.
 *
 * The socket and its token reach the scripts as CGI meta-variables set by the worker (NodeBus::scriptParams()).
 * Why a socket and not a response header the worker strips: docs/design/012-node-bus.md.
 */
final class BusGateway
{
    /** Connections at once; one more is closed at once. */
    public const MAX_CONNECTIONS = 512;

    /** The largest message a script may publish (body bytes). */
    public const MAX_MESSAGE = RelayFrames::MAX_BODY;

    /** @var array<int, GatewayConnection> by stream id */
    private array $connections = [];

    private ?string $watcher = null;

    private readonly int $pid;

    /** @param resource $server */
    private function __construct(
        private readonly Bus $bus,
        private readonly mixed $server,
        private readonly string $dir,
        public readonly string $socket,
        public readonly string $token,
    ) {
        $this->pid = (int) getmypid();
    }

    /**
     * Listens on a fresh socket for $bus (the loop must exist); the directory goes when this process ends.
     *
     * @throws BusException when the directory or the socket cannot be made
     */
    public static function start(Bus $bus, ?string $tmp = null): self
    {
        $tmp = rtrim($tmp ?? sys_get_temp_dir(), '/');
        self::sweep($tmp);
        $dir = $tmp . '/kiln-bus-' . getmypid() . '-' . bin2hex(random_bytes(4));
        if (!@mkdir($dir, 0700)) {
            throw new BusException("Cannot create the bus gateway directory $dir: " . (error_get_last()['message'] ?? 'mkdir failed'));
        }
        @chmod($dir, 0700);
        $path = $dir . '/bus.sock';
        $server = @stream_socket_server('unix://' . $path, $errno, $error);
        if ($server === false) {
            @rmdir($dir);
            throw new BusException("Cannot listen on the bus gateway socket $path: $error");
        }
        @chmod($path, 0600);
        stream_set_blocking($server, false);
        $gateway = new self($bus, $server, $dir, $path, bin2hex(random_bytes(32)));
        $gateway->watcher = Loop::onReadable($server, $gateway->accept(...));
        Loop::unreference($gateway->watcher);
        register_shutdown_function($gateway->close(...));
        return $gateway;
    }

    public function connections(): int
    {
        return \count($this->connections);
    }

    /** Stops listening, closes every connection and removes the socket and its directory. */
    public function close(): void
    {
        if ($this->watcher === null || $this->pid !== getmypid()) {
            return;
        }
        Loop::cancel($this->watcher);
        $this->watcher = null;
        foreach ($this->connections as $connection) {
            $connection->close();
        }
        $this->connections = [];
        @fclose($this->server);
        @unlink($this->socket);
        @rmdir($this->dir);
    }

    private function accept(): void
    {
        while (($stream = @stream_socket_accept($this->server, 0)) !== false) {
            if (\count($this->connections) >= self::MAX_CONNECTIONS) {
                fclose($stream);
                continue;
            }
            $id = get_resource_id($stream);
            $this->connections[$id] = new GatewayConnection($stream, self::MAX_MESSAGE, $this->frames(...), function () use ($id): void {
                unset($this->connections[$id]);
            });
        }
    }

    /**
     * One connection's frames: the token first, then messages. Returns the answers to write (null: close).
     *
     * @param list<string> $bodies
     * @return list<string>|null
     */
    private function frames(GatewayConnection $connection, array $bodies): ?array
    {
        $answers = [];
        foreach ($bodies as $body) {
            if (!$connection->trusted) {
                if (!hash_equals($this->token, $body)) {
                    return null;
                }
                $connection->trusted = true;
                continue;
            }
            try {
                [$channel, $payload] = BusMessage::decode($body);
                $this->bus->publish($channel, $payload);
                $answers[] = '';
            } catch (BusException $e) {
                $answers[] = $e->getMessage() === '' ? 'not published' : $e->getMessage();
            }
        }
        return $answers;
    }

    /** Removes the gateway directories of workers that are gone (killed: they could not clean up). */
    private static function sweep(string $tmp): void
    {
        foreach (glob($tmp . '/kiln-bus-*-*', GLOB_ONLYDIR) ?: [] as $dir) {
            if (preg_match('~/kiln-bus-(\d+)-[0-9a-f]{8}$~D', $dir, $m) !== 1 || @posix_kill((int) $m[1], 0) || fileowner($dir) !== posix_geteuid()) {
                continue;
            }
            @unlink($dir . '/bus.sock');
            @rmdir($dir);
        }
    }
}
