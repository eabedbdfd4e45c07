<?php

declare(strict_types=1);

namespace Kiln\Isolation\FastCgi;

/**
 * Where a FastCGI responder listens: `host:port` (a name or an IPv4 address), `[v6]:port`, or `unix:/path`
 * (also `unix:///path`; a relative path is taken as given). Parsing never resolves names or touches the file.
 */
final class FastCgiAddress
{
    /** toString(), made once: it keys the connection pool on every request. */
    private readonly string $canonical;

    private function __construct(
        /** Host name or address (IPv6 without brackets); null for a unix socket. */
        public readonly ?string $host,
        public readonly int $port,
        /** Path of the unix socket; null for TCP. */
        public readonly ?string $path,
    ) {
        $this->canonical = $path !== null ? 'unix:' . $path : $this->authority();
    }

    /** @throws \ValueError with a message that shows the accepted forms */
    public static function parse(string $address): self
    {
        $forms = 'expected host:port, [ipv6]:port or unix:/path/to/socket';
        if (\str_starts_with($address, 'unix:')) {
            $path = \substr($address, 5);
            if (\str_starts_with($path, '//')) {
                $path = \substr($path, 2);
            }
            if ($path === '' || \str_contains($path, "\0")) {
                throw new \ValueError("Invalid FastCGI address \"{$address}\": the unix socket path is empty; {$forms}");
            }

            return self::unix($path);
        }
        if (\preg_match('/^(?:\[([0-9A-Fa-f:.]+(?:%[\w.-]+)?)\]|([A-Za-z0-9._-]+)):(\d{1,5})$/D', $address, $m) !== 1) {
            throw new \ValueError("Invalid FastCGI address \"{$address}\": {$forms}");
        }
        $host = $m[1] !== '' ? $m[1] : $m[2];
        if ($m[1] !== '' && \filter_var(\explode('%', $host)[0], \FILTER_VALIDATE_IP, \FILTER_FLAG_IPV6) === false) {
            throw new \ValueError("Invalid FastCGI address \"{$address}\": \"{$host}\" is not an IPv6 address");
        }

        return self::tcp($host, (int) $m[3]);
    }

    public static function tcp(string $host, int $port): self
    {
        if ($host === '' || $port < 1 || $port > 65535) {
            throw new \ValueError("Invalid FastCGI address {$host}:{$port}: a host and a port 1-65535 are needed");
        }

        return new self($host, $port, null);
    }

    public static function unix(string $path): self
    {
        if ($path === '') {
            throw new \ValueError('Invalid FastCGI address: the unix socket path is empty');
        }

        return new self(null, 0, $path);
    }

    public function isUnix(): bool
    {
        return $this->path !== null;
    }

    /** The address for stream_socket_client(): `tcp://127.0.0.1:9000`, `tcp://[::1]:9000`, `unix:///run/php.sock`. */
    public function uri(): string
    {
        if ($this->path !== null) {
            return 'unix://' . $this->path;
        }

        return 'tcp://' . $this->authority();
    }

    /** The canonical text form, accepted by parse(): `127.0.0.1:9000`, `[::1]:9000`, `unix:/run/php.sock`. */
    public function toString(): string
    {
        return $this->canonical;
    }

    public function __toString(): string
    {
        return $this->toString();
    }

    private function authority(): string
    {
        $host = (string) $this->host;

        return (\str_contains($host, ':') ? "[{$host}]" : $host) . ':' . $this->port;
    }
}
