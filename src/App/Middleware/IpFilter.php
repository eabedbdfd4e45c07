<?php

declare(strict_types=1);

namespace Kiln\App\Middleware;

use Kiln\App\HttpError;
use Kiln\App\Middleware;
use Kiln\Http\Request;
use Kiln\Http\RequestHandler;
use Kiln\Http\Response;

/**
 * Allows or refuses (403) a request by client address: the `client_ip` attribute when the trusted-proxy
 * logic set one, else the peer address. Entries are CIDRs ("10.0.0.0/8", "2001:db8::/32") or single
 * addresses, IPv4 or IPv6; an IPv4-mapped IPv6 address ("::ffff:192.0.2.1") is the IPv4 address, in the
 * lists and in requests. Deny wins over allow. An address in neither list gets the default policy: allowed
 * unless an allow list is given (pass $allowByDefault to say otherwise). An unparseable client address
 * matches no entry. Host bits in an entry are ignored ("10.1.2.3/8" is "10.0.0.0/8").
 */
final class IpFilter implements Middleware
{
    /** @var list<array{string, string}> network (masked) and mask, as binary strings */
    private readonly array $allow;

    /** @var list<array{string, string}> */
    private readonly array $deny;

    private readonly bool $allowByDefault;

    /**
     * @param list<string> $allow
     * @param list<string> $deny
     */
    public function __construct(array $allow = [], array $deny = [], ?bool $allowByDefault = null)
    {
        $this->allow = array_map(self::parseCidr(...), $allow);
        $this->deny = array_map(self::parseCidr(...), $deny);
        $this->allowByDefault = $allowByDefault ?? $allow === [];
    }

    public function process(Request $request, RequestHandler $next): Response
    {
        $ip = $request->attribute('client_ip');
        if (!$this->allows(\is_string($ip) && $ip !== '' ? $ip : $request->remoteAddress)) {
            throw HttpError::forbidden();
        }
        return $next->handle($request);
    }

    public function allows(string $address): bool
    {
        $binary = self::binary(trim($address, '[]'));
        if ($binary === null) {
            return $this->allowByDefault;
        }
        if (self::matches($binary, $this->deny)) {
            return false;
        }
        return self::matches($binary, $this->allow) || $this->allowByDefault;
    }

    /** @param list<array{string, string}> $networks */
    private static function matches(string $binary, array $networks): bool
    {
        foreach ($networks as [$network, $mask]) {
            if (\strlen($network) === \strlen($binary) && ($binary & $mask) === $network) {
                return true;
            }
        }
        return false;
    }

    /** @return array{string, string} */
    private static function parseCidr(string $entry): array
    {
        $parts = explode('/', trim($entry), 2);
        $binary = self::binary($parts[0], $mapped);
        $bits = $binary === null ? 0 : \strlen($binary) * 8;
        $prefix = $bits;
        if (isset($parts[1])) {
            $prefix = ctype_digit($parts[1]) ? (int) $parts[1] - ($mapped ? 96 : 0) : -1;
        }
        if ($binary === null || $prefix < 0 || $prefix > $bits) {
            throw new \ValueError("IpFilter entries are addresses or CIDRs like '10.0.0.0/8' or '2001:db8::/32', got '$entry'");
        }
        $mask = str_repeat("\xff", intdiv($prefix, 8));
        if ($prefix % 8 !== 0) {
            $mask .= \chr((0xff << (8 - $prefix % 8)) & 0xff);
        }
        $mask = str_pad($mask, \strlen($binary), "\x00");
        return [$binary & $mask, $mask];
    }

    /** Packed address, IPv4-mapped IPv6 folded to 4 bytes; null when not an address. */
    private static function binary(string $address, ?bool &$mapped = false): ?string
    {
        $zone = strpos($address, '%');
        if ($zone !== false) {
            $address = substr($address, 0, $zone);
        }
        $binary = @inet_pton($address);
        if ($binary === false) {
            return null;
        }
        $mapped = \strlen($binary) === 16 && str_starts_with($binary, str_repeat("\x00", 10) . "\xff\xff");
        return $mapped ? substr($binary, 12) : $binary;
    }
}
