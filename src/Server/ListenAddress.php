<?php

declare(strict_types=1);

namespace Kiln\Server;

/** A TCP address to listen on: `HOST:PORT` or `[IPv6]:PORT`. Port 0 asks the kernel for a free port. */
final class ListenAddress
{
    public function __construct(
        public readonly string $host,
        public readonly int $port,
    ) {
        if ($port < 0 || $port > 65535) {
            throw new \ValueError("Listen port must be between 0 and 65535, got $port");
        }
        if ($host === '') {
            throw new \ValueError('Listen host is empty; use e.g. 127.0.0.1:8080 or 0.0.0.0:8080');
        }
    }

    public static function parse(string $address): self
    {
        $address = trim($address);
        if (preg_match('/^(?:\[([0-9a-fA-F:.]+)\]|([^:\[\]\s]+)):(\d{1,5})$/', $address, $m) !== 1) {
            throw new \ValueError("Bad listen address '$address'; use HOST:PORT, e.g. 127.0.0.1:8080 or [::1]:8080");
        }
        return new self($m[1] !== '' ? $m[1] : $m[2], (int) $m[3]);
    }

    public function withPort(int $port): self
    {
        return new self($this->host, $port);
    }

    public function isIpv6(): bool
    {
        return str_contains($this->host, ':');
    }

    /** host:port as in a URL (IPv6 bracketed). */
    public function authority(): string
    {
        return ($this->isIpv6() ? "[{$this->host}]" : $this->host) . ':' . $this->port;
    }

    public function uri(): string
    {
        return 'tcp://' . $this->authority();
    }

    public function url(): string
    {
        return 'http://' . $this->authority();
    }
}
