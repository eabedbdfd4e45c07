<?php

declare(strict_types=1);

namespace Kiln\Server;

/**
 * Binds listening sockets. Shared mode: the supervisor binds before forking and every worker inherits
 * the socket (one accept queue). Reuseport mode: the supervisor binds once with SO_REUSEPORT only to
 * check the address and learn a port 0's real port, closes it, and each worker binds its own.
 */
final class Listeners
{
    public const BACKLOG = 511;

    /** @var list<resource> */
    private array $sockets = [];

    /** @var list<ListenAddress> */
    private array $bound = [];

    /** @param non-empty-list<ListenAddress> $addresses */
    public function __construct(
        private readonly array $addresses,
        private readonly ListenerMode $mode,
    ) {}

    /** Binds every address (the supervisor, before fork). Throws ServerException with a one-line reason. */
    public function open(): void
    {
        foreach ($this->addresses as $address) {
            [$socket, $real] = self::bind($address, $this->mode === ListenerMode::ReusePort);
            $this->bound[] = $real;
            if ($this->mode === ListenerMode::Shared) {
                $this->sockets[] = $socket;
            } else {
                fclose($socket);
            }
        }
    }

    /** @return list<ListenAddress> the addresses with their real ports (port 0 resolved) */
    public function bound(): array
    {
        return $this->bound;
    }

    /**
     * The sockets a worker serves on: the inherited ones, or (reuseport) its own, bound now.
     *
     * @return list<resource>
     */
    public function forWorker(): array
    {
        if ($this->mode === ListenerMode::Shared) {
            return $this->sockets;
        }
        $sockets = [];
        foreach ($this->bound as $address) {
            $sockets[] = self::bind($address, true)[0];
        }
        return $sockets;
    }

    public function close(): void
    {
        foreach ($this->sockets as $socket) {
            @fclose($socket);
        }
        $this->sockets = [];
    }

    /** @return array{resource, ListenAddress} */
    public static function bind(ListenAddress $address, bool $reusePort): array
    {
        $context = stream_context_create(['socket' => [
            'backlog' => self::BACKLOG,
            'so_reuseport' => $reusePort,
            'ipv6_v6only' => $address->isIpv6(),
            // Set on each accepted connection: a response written in pieces (a streamed body, SSE) must not
            // wait for the client's delayed ACK (Nagle: ~40 ms per piece after the first).
            'tcp_nodelay' => true,
        ]]);
        $errno = 0;
        $errstr = '';
        $socket = @stream_socket_server(
            $address->uri(),
            $errno,
            $errstr,
            STREAM_SERVER_BIND | STREAM_SERVER_LISTEN,
            $context,
        );
        if ($socket === false) {
            $hint = $errno === 98 || stripos((string) $errstr, 'in use') !== false
                ? ' (another process listens there: stop it or choose another --listen port)'
                : ' (check the --listen address)';
            $reason = (string) $errstr !== '' ? (string) $errstr : 'unknown error';
            throw new ServerException("Cannot listen on {$address->authority()}: $reason$hint");
        }
        stream_set_blocking($socket, false);
        $name = (string) stream_socket_get_name($socket, false);
        $colon = strrpos($name, ':');
        $port = $colon === false ? $address->port : (int) substr($name, $colon + 1);
        return [$socket, $address->withPort($port)];
    }
}
