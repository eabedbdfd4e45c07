<?php

declare(strict_types=1);

namespace Kiln\App\Middleware;

use Kiln\App\HttpErrorException;
use Kiln\App\Middleware;
use Kiln\Http\Cidr;
use Kiln\Http\Request;
use Kiln\Http\RequestHandler;
use Kiln\Http\Response;

/**
 * Allows or refuses (403) a request by client address: Request::clientIp(), the client trusted proxies
 * named (TrustedProxies), else the peer address. Entries are CIDRs ("10.0.0.0/8", "2001:db8::/32") or single
 * addresses, IPv4 or IPv6; an IPv4-mapped IPv6 address ("::ffff:192.0.2.1") is the IPv4 address, in the
 * lists and in requests. Deny wins over allow. An address in neither list gets the default policy: allowed
 * unless an allow list is given (pass $allowByDefault to say otherwise). An unparseable client address
 * matches no entry. Host bits in an entry are ignored ("10.1.2.3/8" is "10.0.0.0/8").
 */
final class IpFilter implements Middleware
{
    /** @var list<Cidr> */
    private readonly array $allow;

    /** @var list<Cidr> */
    private readonly array $deny;

    private readonly bool $allowByDefault;

    /**
     * @param list<string> $allow
     * @param list<string> $deny
     */
    public function __construct(array $allow = [], array $deny = [], ?bool $allowByDefault = null)
    {
        $this->allow = array_map(self::parse(...), $allow);
        $this->deny = array_map(self::parse(...), $deny);
        $this->allowByDefault = $allowByDefault ?? $allow === [];
    }

    public function process(Request $request, RequestHandler $next): Response
    {
        if (!$this->allows($request->clientIp())) {
            throw HttpErrorException::forbidden();
        }
        return $next->handle($request);
    }

    public function allows(string $address): bool
    {
        if (Cidr::binary($address) === null) {
            return $this->allowByDefault;
        }
        if (Cidr::any($this->deny, $address)) {
            return false;
        }
        return Cidr::any($this->allow, $address) || $this->allowByDefault;
    }

    private static function parse(string $entry): Cidr
    {
        try {
            return Cidr::parse($entry);
        } catch (\ValueError) {
            throw new \ValueError("IpFilter entries are addresses or CIDRs like '10.0.0.0/8' or '2001:db8::/32', got '$entry'");
        }
    }
}
