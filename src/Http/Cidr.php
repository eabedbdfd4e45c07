<?php

declare(strict_types=1);

namespace Kiln\Http;

/**
 * An IPv4 or IPv6 network ("10.0.0.0/8", "2001:db8::/32", or one address). IPv4-mapped IPv6 addresses
 * ("::ffff:192.0.2.1") count as IPv4, in networks and in the addresses tested; a zone ("%eth0") is
 * ignored. Host bits are masked off ("10.1.2.3/8" is "10.0.0.0/8"). Used for trusted proxies
 * (ForwardedHeaders) and App's IpFilter.
 */
final class Cidr
{
    private function __construct(
        private readonly string $network,
        private readonly string $mask,
    ) {}

    /** @throws \ValueError when $entry is neither an address nor a CIDR */
    public static function parse(string $entry): self
    {
        [$address, $prefix] = array_pad(explode('/', trim($entry), 2), 2, null);
        $binary = self::binary((string) $address, $mapped);
        $bits = $binary === null ? 0 : \strlen($binary) * 8;
        $length = $prefix === null ? $bits : (ctype_digit($prefix) ? (int) $prefix - ($mapped ? 96 : 0) : -1);
        if ($binary === null || $length < 0 || $length > $bits) {
            throw new \ValueError("Expected an IP address or a CIDR like '10.0.0.0/8' or '2001:db8::/32', got '$entry'");
        }
        $mask = str_pad(str_repeat("\xff", intdiv($length, 8)) . ($length % 8 === 0 ? '' : \chr((0xff << (8 - $length % 8)) & 0xff)), \strlen($binary), "\x00");
        return new self($binary & $mask, $mask);
    }

    public function contains(string $address): bool
    {
        $binary = self::binary($address);
        return $binary !== null && \strlen($binary) === \strlen($this->network) && ($binary & $this->mask) === $this->network;
    }

    /** @param list<self> $networks */
    public static function any(array $networks, string $address): bool
    {
        foreach ($networks as $network) {
            if ($network->contains($address)) {
                return true;
            }
        }
        return false;
    }

    /** Packed address (IPv4-mapped IPv6 folded to 4 bytes; brackets and zone dropped); null if not an address. */
    public static function binary(string $address, ?bool &$mapped = false): ?string
    {
        $address = trim($address, '[]');
        $zone = strpos($address, '%');
        $binary = @inet_pton($zone === false ? $address : substr($address, 0, $zone));
        if ($binary === false) {
            return null;
        }
        $mapped = \strlen($binary) === 16 && str_starts_with($binary, str_repeat("\x00", 10) . "\xff\xff");
        return $mapped ? substr($binary, 12) : $binary;
    }
}
