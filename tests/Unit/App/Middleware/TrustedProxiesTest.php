<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\App\Middleware;

use Kiln\App\Middleware\TrustedProxies;
use Kiln\Http\Request;
use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;

final class TrustedProxiesTest extends TestCase
{
    /** @param array<string, string|list<string>> $headers */
    private static function through(array $headers, string $peer, ?TrustedProxies $proxies = null): Request
    {
        $request = Requests::make(headers: $headers, remoteAddress: $peer);
        $next = Requests::next();
        ($proxies ?? new TrustedProxies(['10.0.0.0/8', '2001:db8::/32']))->process($request, $next);
        self::assertSame(1, $next->calls);
        return $request;
    }

    public function testASpoofedForwardedForFromAnUntrustedPeerChangesNothing(): void
    {
        $request = self::through([
            'X-Forwarded-For' => '1.2.3.4', 'X-Forwarded-Proto' => 'https', 'X-Forwarded-Host' => 'evil.example',
            'Forwarded' => 'for=1.2.3.4;proto=https',
        ], '198.51.100.20');
        self::assertSame('198.51.100.20', $request->clientIp());
        self::assertSame('http', $request->scheme());
        self::assertNull($request->forwardedClient()?->host);
        self::assertNull($request->forwardedClient());
    }

    public function testTheFirstUntrustedAddressFromTheRightIsTheClient(): void
    {
        // The client forged "1.2.3.4"; our proxies appended the real hops.
        $request = self::through(['X-Forwarded-For' => ['1.2.3.4, 203.0.113.5', '10.0.0.2']], '10.0.0.1');
        self::assertSame('203.0.113.5', $request->clientIp());
    }

    public function testProtoAndHostComeWithTheClientHop(): void
    {
        $request = self::through(['X-Forwarded-For' => '203.0.113.5', 'X-Forwarded-Proto' => 'HTTPS', 'X-Forwarded-Host' => 'Shop.Example.com:8443'], '10.1.1.1');
        self::assertSame(['203.0.113.5', 'https', 'shop.example.com'], [$request->clientIp(), $request->scheme(), $request->forwardedClient()?->host]);
    }

    public function testThePortIsTheOneTheClientReachedAtTheProxy(): void
    {
        $port = static fn(array $headers, string $peer = '10.1.1.1'): mixed => self::through($headers, $peer)->forwardedClient()?->port;
        self::assertSame(8443, $port(['X-Forwarded-For' => '203.0.113.5', 'X-Forwarded-Host' => 'shop.example.com:8443', 'Host' => 'backend:8080']));
        self::assertSame(443, $port(['X-Forwarded-For' => '203.0.113.5', 'X-Forwarded-Proto' => 'https', 'X-Forwarded-Host' => 'shop.example.com', 'Host' => 'backend:8080']), "the forwarded host's scheme default");
        self::assertSame(443, $port(['X-Forwarded-For' => '203.0.113.5', 'X-Forwarded-Proto' => 'https', 'Host' => 'shop.example.com']));
        self::assertSame(443, $port(['X-Forwarded-For' => '203.0.113.5', 'X-Forwarded-Proto' => 'https', 'Host' => '127.0.0.1:8080']), "never the Host header's port (often the proxy's upstream)");
        self::assertNull($port(['Forwarded' => 'for=203.0.113.5']), 'nothing said of scheme or host: the local port stays');
        self::assertSame(443, $port(['X-Forwarded-For' => '203.0.113.5', 'X-Forwarded-Proto' => 'https', 'X-Forwarded-Host' => 'shop.example.com:99999']), 'a port out of range is not taken');
        self::assertSame(443, $port(['Forwarded' => 'proto=https;host=shop.example.com']), 'RFC 7239 lets the proxy leave out for=');
        self::assertSame(81, $port(['Forwarded' => 'for=203.0.113.5;host="[2001:db8::1]:81"']));
        self::assertNull($port(['X-Forwarded-For' => '203.0.113.5', 'X-Forwarded-Host' => 'shop.example.com:8443'], '198.51.100.20'), 'not from an untrusted peer');
        self::assertNull($port(['Host' => 'shop.example.com:8443']), 'nothing forwarded');
    }

    public function testProtoAndHostWithoutForwardedForKeepThePeerAsTheClient(): void
    {
        $request = self::through(['X-Forwarded-Proto' => 'https', 'X-Forwarded-Host' => 'shop.example.com'], '10.1.1.1');
        self::assertSame(['10.1.1.1', 'https', 'shop.example.com', 443], [$request->clientIp(), $request->scheme(), $request->forwardedClient()?->host, $request->forwardedClient()?->port]);
        self::assertSame('http', self::through(['X-Forwarded-Proto' => 'https'], '198.51.100.20')->scheme(), 'not from an untrusted peer');
        self::assertNull(self::through([], '10.1.1.1')->forwardedClient(), 'nothing forwarded, nothing set');
    }

    public function testInvalidProtoAndHostAreIgnored(): void
    {
        $request = self::through(['X-Forwarded-For' => '203.0.113.5', 'X-Forwarded-Proto' => 'javascript', 'X-Forwarded-Host' => 'a b/c'], '10.1.1.1');
        self::assertSame('http', $request->scheme());
        self::assertNull($request->forwardedClient()?->scheme);
        self::assertNull($request->forwardedClient()?->host);
    }

    /** @return iterable<string, array{string, string, ?string, ?string}> */
    public static function forwarded(): iterable
    {
        yield 'simple' => ['for=203.0.113.5;proto=https;host=example.com', '203.0.113.5', 'https', 'example.com'];
        yield 'IPv6 in brackets with port' => ['for="[2001:DB9::1]:4711";proto=http', '2001:db9::1', 'http', null];
        yield 'IPv4 with port, quoted' => ['for="203.0.113.5:80"', '203.0.113.5', null, null];
        yield 'chain skipping trusted' => ['for=198.51.100.1, for=203.0.113.5;proto=https, for="[2001:db8::7]"', '203.0.113.5', 'https', null];
        yield 'case and spaces' => ['For=203.0.113.5 ; Proto=HTTPS', '203.0.113.5', 'https', null];
        yield 'obfuscated stops the walk' => ['for=203.0.113.5, for=_hidden', '10.0.0.1', null, null];
        yield 'unknown stops the walk' => ['for=unknown;proto=https', '10.0.0.1', null, null];
        yield 'malformed header is ignored' => ['for=203.0.113.5;;proto', '10.0.0.1', null, null];
        yield 'unterminated quote' => ['for="203.0.113.5', '10.0.0.1', null, null];
    }

    #[DataProvider('forwarded')]
    public function testForwardedIsParsedPerRfc7239(string $header, string $ip, ?string $proto, ?string $host): void
    {
        $request = self::through(['Forwarded' => $header, 'X-Forwarded-For' => '192.0.2.99'], '10.0.0.1');
        self::assertSame($ip, $request->clientIp());
        self::assertSame($proto, $request->forwardedClient()?->scheme);
        self::assertSame($host, $request->forwardedClient()?->host);
    }

    public function testATrustedIpv6PeerAndMappedAddressesAreRecognised(): void
    {
        self::assertSame('203.0.113.5', self::through(['X-Forwarded-For' => '203.0.113.5'], '2001:db8::1')->clientIp());
        self::assertSame('203.0.113.5', self::through(['X-Forwarded-For' => '203.0.113.5'], '::ffff:10.2.3.4')->clientIp());
        self::assertSame('2001:db9::5', self::through(['X-Forwarded-For' => '[2001:DB9::5]:1234'], '10.0.0.1')->clientIp());
    }

    public function testOnlyTheConfiguredHeadersAreHonoured(): void
    {
        $proxies = new TrustedProxies(['10.0.0.0/8'], ['x-forwarded-for']);
        $request = self::through(['Forwarded' => 'for=198.51.100.1', 'X-Forwarded-For' => '203.0.113.5', 'X-Forwarded-Proto' => 'https'], '10.0.0.1', $proxies);
        self::assertSame('203.0.113.5', $request->clientIp());
        self::assertSame('http', $request->scheme());
    }

    public function testAllHopsTrustedGivesTheLeftmost(): void
    {
        self::assertSame('10.9.9.9', self::through(['X-Forwarded-For' => '10.9.9.9, 10.0.0.3'], '10.0.0.1')->clientIp());
    }

    public function testBadConfigurationIsRefused(): void
    {
        $this->expectException(\ValueError::class);
        new TrustedProxies(['10.0.0.0/33']);
    }

    public function testUnknownHeaderNamesAreRefused(): void
    {
        $this->expectException(\ValueError::class);
        new TrustedProxies(['10.0.0.0/8'], ['x-real-ip']);
    }
}
