<?php

declare(strict_types=1);

namespace Kiln\Site\Htaccess;

use Kiln\Http\Request;

/**
 * What rules may look at in a request, as plain values: `%{…}` variables of RewriteCond, the client
 * address of `Require ip` and `Allow from`, the method of `<Limit>`.
 */
final class RequestFacts
{
    /**
     * @param array<string, string> $headers lower-case name => value (repeated headers joined with `, `)
     */
    public function __construct(
        public readonly string $method,
        /** The path as sent on the request line, still percent-encoded. */
        public readonly string $path,
        public readonly string $query = '',
        public readonly array $headers = [],
        public readonly string $remoteAddress = '127.0.0.1',
        public readonly bool $https = false,
        public readonly string $protocol = 'HTTP/1.1',
        public readonly int $remotePort = 0,
        public readonly string $serverAddress = '',
        public readonly int $serverPort = 0,
        /** The request target as sent (for `%{THE_REQUEST}`); '' means path?query. */
        public readonly string $target = '',
    ) {}

    /** The facts of a Kiln request: the only place this namespace reads Kiln's HTTP classes. */
    public static function fromRequest(Request $request): self
    {
        $headers = [];
        foreach ($request->headers() as $name => $values) {
            $headers[$name] = implode($name === 'cookie' ? '; ' : ', ', $values);
        }
        return new self(
            $request->method(),
            $request->path(),
            $request->queryString(),
            $headers,
            $request->clientIp(),
            $request->scheme() === 'https',
            'HTTP/' . $request->protocolVersion(),
            $request->remotePort,
            $request->localAddress,
            $request->localPort,
            $request->target(),
        );
    }

    public function header(string $name): string
    {
        return $this->headers[strtolower($name)] ?? '';
    }

    /** The Host header with its port, as Apache's HTTP_HOST. */
    public function host(): string
    {
        return $this->header('host');
    }

    /** The Host without its port, as Apache's SERVER_NAME with UseCanonicalName Off. */
    public function serverName(): string
    {
        $host = $this->host();
        if ($host === '') {
            return $this->serverAddress;
        }
        return preg_replace('/:\d*$/', '', $host) ?? $host;
    }

    public function scheme(): string
    {
        return $this->https ? 'https' : 'http';
    }

    public function theRequest(): string
    {
        $target = $this->target !== '' ? $this->target : $this->path . ($this->query === '' ? '' : '?' . $this->query);
        return "{$this->method} $target {$this->protocol}";
    }
}
