<?php

declare(strict_types=1);

namespace Kiln\Redis;

/** A server address: host and port, or a unix socket path (port 0). */
final class Endpoint implements \Stringable
{
    public function __construct(public readonly string $host, public readonly int $port = 6379)
    {
        if ($host === '') {
            throw new \ValueError('A Redis endpoint needs a host or a socket path');
        }
        if ($port < 0 || $port > 65535) {
            throw new \ValueError("Port $port is out of range");
        }
    }

    public static function parse(string $hostPort, int $defaultPort = 6379): self
    {
        if (str_starts_with($hostPort, '/')) {
            return new self($hostPort, 0);
        }
        if (preg_match('/\A\[([^\]]+)\](?::(\d+))?\z/', $hostPort, $m) === 1) {
            return new self($m[1], isset($m[2]) ? (int) $m[2] : $defaultPort);
        }
        $colon = strrpos($hostPort, ':');
        if ($colon === false) {
            return new self($hostPort, $defaultPort);
        }
        $port = substr($hostPort, $colon + 1);
        if (!ctype_digit($port)) {
            throw new \ValueError("Malformed Redis address \"$hostPort\"");
        }

        return new self(substr($hostPort, 0, $colon), (int) $port);
    }

    public function isUnix(): bool
    {
        return $this->port === 0;
    }

    /** For stream_socket_client(). */
    public function uri(): string
    {
        if ($this->isUnix()) {
            return 'unix://' . $this->host;
        }

        return 'tcp://' . (str_contains($this->host, ':') ? "[{$this->host}]" : $this->host) . ':' . $this->port;
    }

    public function __toString(): string
    {
        return $this->isUnix() ? $this->host : (str_contains($this->host, ':') ? "[{$this->host}]" : $this->host) . ':' . $this->port;
    }
}
