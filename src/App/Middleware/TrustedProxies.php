<?php

declare(strict_types=1);

namespace Kiln\App\Middleware;

use Kiln\App\Middleware;
use Kiln\App\Middleware\Internal\Cidr;
use Kiln\Http\Request;
use Kiln\Http\RequestHandler;
use Kiln\Http\Response;

/**
 * Finds the real client behind reverse proxies you trust, and sets the request attributes `client_ip`
 * (Request::clientIp()), `scheme` ("http"/"https", Request::scheme()), `host` (lower-case, no port) and
 * `port` (int: the port the client reached at the proxy — the forwarded host's, else the Host header's,
 * else 443 or 80 by scheme; a script's SERVER_PORT).
 *
 * Only when the TCP peer is one of $proxies: an untrusted peer's forwarding headers are ignored entirely
 * (anyone can send them). `Forwarded` (RFC 7239) is used when present, else `X-Forwarded-For` with
 * `X-Forwarded-Proto`/`-Host`. The hop list is walked from the right (the entry our peer added), skipping
 * trusted proxies: the first untrusted address is the client. An unusable entry (obfuscated "_x",
 * "unknown", garbage) stops the walk where it is. Proto and host come from the hop that named the client;
 * with X-Forwarded-Proto/-Host lists that do not line up with X-Forwarded-For, the rightmost value. A
 * trusted peer's X-Forwarded-Proto/-Host without X-Forwarded-For give the scheme and host, the peer staying the client.
 */
final class TrustedProxies implements Middleware
{
    public const HEADERS = ['forwarded', 'x-forwarded-for', 'x-forwarded-proto', 'x-forwarded-host'];

    /** @var list<Cidr> */
    private readonly array $proxies;

    /** @var array<string, true> */
    private readonly array $headers;

    /**
     * @param list<string> $proxies addresses or CIDRs, IPv4 or IPv6
     * @param list<string> $headers which of HEADERS to honour
     */
    public function __construct(array $proxies, array $headers = self::HEADERS)
    {
        $this->proxies = array_values(array_map(Cidr::parse(...), $proxies));
        $honoured = [];
        foreach ($headers as $header) {
            $header = strtolower($header);
            if (!\in_array($header, self::HEADERS, true)) {
                throw new \ValueError("TrustedProxies honours " . implode(', ', self::HEADERS) . "; got '$header'");
            }
            $honoured[$header] = true;
        }
        $this->headers = $honoured;
    }

    public function process(Request $request, RequestHandler $next): Response
    {
        if (Cidr::any($this->proxies, $request->remoteAddress)) {
            $hops = $this->hops($request);
            $client = null;
            for ($i = \count($hops) - 1; $i >= 0; $i--) {
                $address = self::node($hops[$i]['for'] ?? '');
                if ($address === null) {
                    break;
                }
                $client = $i;
                if (!Cidr::any($this->proxies, $address)) {
                    break;
                }
            }
            if ($client !== null) {
                $this->apply($request, $hops[$client]);
            }
        }
        return $next->handle($request);
    }

    /** @return list<array<string, string>> hops, left (client side) to right (our peer) */
    private function hops(Request $request): array
    {
        $forwarded = $request->headerValues('forwarded');
        if (isset($this->headers['forwarded']) && $forwarded !== []) {
            $hops = self::forwarded(implode(',', $forwarded)) ?? [];
            $last = \count($hops) - 1;
            if ($last >= 0 && !isset($hops[$last]['for'])) {
                $hops[$last]['for'] = $request->remoteAddress; // RFC 7239 lets a proxy leave out for=: its client unnamed
            }
            return $hops;
        }
        if (!isset($this->headers['x-forwarded-for'])) {
            return [];
        }
        $for = self::list($request->headerValues('x-forwarded-for'));
        $extra = [];
        foreach (['proto' => 'x-forwarded-proto', 'host' => 'x-forwarded-host'] as $key => $header) {
            if (isset($this->headers[$header])) {
                $extra[$key] = self::list($request->headerValues($header));
            }
        }
        if ($for === [] && array_filter($extra) !== []) {
            $for = [$request->remoteAddress]; // X-Forwarded-Proto / -Host alone: the proxy's own hop, its client unnamed
        }
        $hops = [];
        foreach ($for as $i => $address) {
            $hop = ['for' => $address];
            foreach ($extra as $key => $values) {
                $value = \count($values) === \count($for) ? $values[$i] : ($values === [] ? null : $values[\count($values) - 1]);
                if ($value !== null) {
                    $hop[$key] = $value;
                }
            }
            $hops[] = $hop;
        }
        return $hops;
    }

    /** @param array<string, string> $hop */
    private function apply(Request $request, array $hop): void
    {
        $request->setAttribute('client_ip', (string) self::node($hop['for'] ?? ''));
        $proto = strtolower($hop['proto'] ?? '');
        if ($proto === 'http' || $proto === 'https') {
            $request->setAttribute('scheme', $proto);
        }
        $host = self::host($hop['host'] ?? '');
        if ($host !== null) {
            $request->setAttribute('host', $host[0]);
        }
        // The port the client reached the proxy on: the forwarded host's, or the scheme's default once the
        // proxy said anything of scheme or host. Never the Host header's: a proxy often sets that to its
        // upstream (127.0.0.1:8080), and a client can put anything there.
        $port = $host[1] ?? null;
        if ($port !== null && ($port < 1 || $port > 65535)) {
            $port = null;
        }
        if ($port !== null || isset($hop['proto']) || $host !== null) {
            $request->setAttribute('port', $port ?? ($request->scheme() === 'https' ? 443 : 80));
        }
    }

    /**
     * @param list<string> $values
     * @return list<string>
     */
    private static function list(array $values): array
    {
        $items = [];
        foreach (explode(',', implode(',', $values)) as $item) {
            $item = trim($item, " \t");
            if ($item !== '') {
                $items[] = $item;
            }
        }
        return $items;
    }

    /**
     * RFC 7239 elements (comma-separated, pairs split by ";", values token or quoted-string), keys
     * lower-cased, first one wins; null when malformed (then the header is not used at all).
     *
     * @return list<array<string, string>>|null
     */
    private static function forwarded(string $value): ?array
    {
        $pair = '/\G[ \t]*+([!#$%&\'*+\-.^_`|~0-9A-Za-z]++)=("(?:[^"\\\\]|\\\\.)*+"|[!#$%&\'*+\-.^_`|~0-9A-Za-z:\[\]]*+)[ \t]*+([;,]|\z)/';
        $elements = [];
        $element = [];
        $offset = 0;
        $length = \strlen($value);
        while ($offset < $length) {
            if (preg_match('/\G[ \t]*+,/', $value, $m, 0, $offset) === 1) {
                $offset += \strlen($m[0]); // an empty list element
                continue;
            }
            if (preg_match($pair, $value, $m, 0, $offset) !== 1) {
                return null;
            }
            $offset += \strlen($m[0]);
            $item = $m[2] !== '' && $m[2][0] === '"' ? (string) preg_replace('/\\\\(.)/s', '$1', substr($m[2], 1, -1)) : $m[2];
            $element[strtolower($m[1])] ??= $item;
            if ($m[3] !== ';') {
                $elements[] = $element;
                $element = [];
            }
        }
        if ($element !== []) {
            $elements[] = $element; // a trailing ";"
        }
        return $elements;
    }

    /** A hop's address: "192.0.2.1", "192.0.2.1:80", "2001:db8::1", "[2001:db8::1]:80"; null otherwise. */
    private static function node(string $node): ?string
    {
        if (preg_match('/\A\[([0-9A-Fa-f:.]+)\](?::\d{1,5})?\z/', $node, $m) === 1) {
            $ip = filter_var($m[1], \FILTER_VALIDATE_IP, \FILTER_FLAG_IPV6);
        } elseif (preg_match('/\A(\d{1,3}(?:\.\d{1,3}){3})(?::\d{1,5})?\z/', $node, $m) === 1) {
            $ip = filter_var($m[1], \FILTER_VALIDATE_IP, \FILTER_FLAG_IPV4);
        } else {
            $ip = filter_var($node, \FILTER_VALIDATE_IP, \FILTER_FLAG_IPV6);
        }
        $binary = \is_string($ip) ? @inet_pton($ip) : false;
        return $binary === false ? null : (string) inet_ntop($binary);
    }

    /**
     * A forwarded Host value (uri-host [":" port]): the host lower-cased, and the port if given; null when invalid.
     *
     * @return array{string, ?int}|null
     */
    private static function host(string $value): ?array
    {
        if (preg_match('/\A(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9\-._~]+)(?::(\d{1,5}))?\z/', $value, $m) !== 1) {
            return null;
        }
        if ($m[1][0] === '[' && filter_var(substr($m[1], 1, -1), \FILTER_VALIDATE_IP, \FILTER_FLAG_IPV6) === false) {
            return null;
        }
        return [strtolower($m[1]), isset($m[2]) ? (int) $m[2] : null];
    }
}
