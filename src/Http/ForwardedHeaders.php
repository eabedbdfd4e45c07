<?php

declare(strict_types=1);

namespace Kiln\Http;

use Kiln\Http\Internal\ForwardedSyntax;

/**
 * Finds the real client behind reverse proxies you trust, from the forwarding headers of a request whose
 * TCP peer is one of them: an untrusted peer's forwarding headers are ignored entirely (anyone can send them).
 *
 * `Forwarded` (RFC 7239) is used when present, else `X-Forwarded-For` with `X-Forwarded-Proto`/`-Host`.
 * The hop list is walked from the right (the entry our peer added), skipping trusted proxies: the first
 * untrusted address is the client. An unusable entry (obfuscated "_x", "unknown", garbage) stops the walk
 * where it is. Proto and host come from the hop that named the client; with X-Forwarded-Proto/-Host lists
 * that do not line up with X-Forwarded-For, the rightmost value. A trusted peer's X-Forwarded-Proto/-Host
 * without X-Forwarded-For give the scheme and host, the peer staying the client.
 *
 * The port is the one the client reached at the proxy: the forwarded host's, or the scheme's default once
 * the proxy said anything of scheme or host. Never the Host header's: a proxy often sets that to its
 * upstream (127.0.0.1:8080), and a client can put anything there.
 */
final class ForwardedHeaders
{
    public const HEADERS = ['forwarded', 'x-forwarded-for', 'x-forwarded-proto', 'x-forwarded-host'];

    /** @var list<Cidr> */
    private readonly array $proxies;

    /** @var array<string, true> */
    private readonly array $headers;

    /**
     * @param list<string> $proxies addresses or CIDRs, IPv4 or IPv6
     * @param list<string> $headers which of HEADERS to honour
     * @throws \ValueError for an entry that is no address or CIDR, or a header not in HEADERS
     */
    public function __construct(array $proxies, array $headers = self::HEADERS)
    {
        $this->proxies = array_values(array_map(Cidr::parse(...), $proxies));
        $honoured = [];
        foreach ($headers as $header) {
            $header = strtolower($header);
            if (!\in_array($header, self::HEADERS, true)) {
                throw new \ValueError('TrustedProxies honours ' . implode(', ', self::HEADERS) . "; got '$header'");
            }
            $honoured[$header] = true;
        }
        $this->headers = $honoured;
    }

    /** The client the trusted proxies name, or null (an untrusted peer, nothing usable forwarded). */
    public function client(Request $request): ?ForwardedClient
    {
        if (!Cidr::any($this->proxies, $request->remoteAddress)) {
            return null;
        }
        $hops = $this->hops($request);
        $client = null;
        for ($i = \count($hops) - 1; $i >= 0; $i--) {
            $address = ForwardedSyntax::node($hops[$i]['for'] ?? '');
            if ($address === null) {
                break;
            }
            $client = $i;
            if (!Cidr::any($this->proxies, $address)) {
                break;
            }
        }
        return $client === null ? null : self::describe($hops[$client]);
    }

    /** @return list<array<string, string>> hops, left (client side) to right (our peer) */
    private function hops(Request $request): array
    {
        $forwarded = $request->headerValues('forwarded');
        if (isset($this->headers['forwarded']) && $forwarded !== []) {
            $hops = ForwardedSyntax::forwarded(implode(',', $forwarded)) ?? [];
            $last = \count($hops) - 1;
            if ($last >= 0 && !isset($hops[$last]['for'])) {
                $hops[$last]['for'] = $request->remoteAddress; // RFC 7239 lets a proxy leave out for=: its client unnamed
            }
            return $hops;
        }
        if (!isset($this->headers['x-forwarded-for'])) {
            return [];
        }
        $for = ForwardedSyntax::list($request->headerValues('x-forwarded-for'));
        $extra = [];
        foreach (['proto' => 'x-forwarded-proto', 'host' => 'x-forwarded-host'] as $key => $header) {
            if (isset($this->headers[$header])) {
                $extra[$key] = ForwardedSyntax::list($request->headerValues($header));
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

    /** @param array<string, string> $hop a hop whose `for` is a usable address */
    private static function describe(array $hop): ForwardedClient
    {
        $proto = strtolower($hop['proto'] ?? '');
        $scheme = $proto === 'http' || $proto === 'https' ? $proto : null;
        $host = ForwardedSyntax::host($hop['host'] ?? '');
        $port = $host[1] ?? null;
        if ($port !== null && ($port < 1 || $port > 65535)) {
            $port = null;
        }
        if ($port === null && (isset($hop['proto']) || $host !== null)) {
            $port = $scheme === 'https' ? 443 : 80;
        }

        return new ForwardedClient((string) ForwardedSyntax::node($hop['for'] ?? ''), $scheme, $host[0] ?? null, $port);
    }
}
