<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Http;

use Kiln\Http\ForwardedClient;
use Kiln\Http\ForwardedHeaders;
use Kiln\Http\Request;
use Kiln\Tests\Unit\App\Middleware\Requests;
use PHPUnit\Framework\TestCase;

/** The rules themselves are TrustedProxiesTest's (the middleware is their public face); here, the value they give. */
final class ForwardedHeadersTest extends TestCase
{
    /** @param array<string, string> $headers */
    private static function request(array $headers, string $peer): Request
    {
        return Requests::make(headers: $headers, remoteAddress: $peer);
    }

    public function testATrustedPeerGivesOneTypedValue(): void
    {
        $client = (new ForwardedHeaders(['10.0.0.0/8']))->client(self::request([
            'X-Forwarded-For' => '203.0.113.5', 'X-Forwarded-Proto' => 'https', 'X-Forwarded-Host' => 'Shop.Example.com:8443',
        ], '10.0.0.1'));
        self::assertEquals(new ForwardedClient('203.0.113.5', 'https', 'shop.example.com', 8443), $client);
    }

    public function testAnUntrustedPeerGivesNothing(): void
    {
        self::assertNull((new ForwardedHeaders(['10.0.0.0/8']))->client(self::request(['X-Forwarded-For' => '203.0.113.5'], '198.51.100.1')));
    }

    public function testAForwardedClientHoldsOnlyASchemeAndPortThatCanBe(): void
    {
        $this->expectException(\ValueError::class);
        new ForwardedClient('203.0.113.5', 'javascript');
    }

    public function testAForwardedPortIsInRange(): void
    {
        $this->expectException(\ValueError::class);
        new ForwardedClient('203.0.113.5', null, null, 70000);
    }
}
