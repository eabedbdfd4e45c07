<?php

declare(strict_types=1);

namespace Kiln\Site\Htaccess;

/**
 * An address range as `Allow from`, `Require ip` and `-ipmatch` write it: a full address (IPv4 or IPv6),
 * a partial IPv4 (`10.1` or `10.1.`), a CIDR (`10.0.0.0/8`, `2001:db8::/32`) or an address/netmask.
 */
final class IpRange
{
    private function __construct(
        private readonly string $network,
        private readonly int $bits,
    ) {}

    /** Null when it is not an address range (a host name: Kiln does no DNS look-ups). */
    public static function parse(string $text): ?self
    {
        if (preg_match('/^\d{1,3}(\.\d{1,3}){0,3}\.?$/', $text) === 1 && substr_count(rtrim($text, '.'), '.') < 3) {
            $parts = explode('.', rtrim($text, '.'));
            $bits = 8 * \count($parts);
            $text = implode('.', array_pad($parts, 4, '0')) . "/$bits";
        }
        $slash = strpos($text, '/');
        $address = $slash === false ? $text : substr($text, 0, $slash);
        $mask = $slash === false ? null : substr($text, $slash + 1);
        $network = @inet_pton($address);
        if ($network === false) {
            return null;
        }
        $max = 8 * \strlen($network);
        if ($mask === null) {
            return new self($network, $max);
        }
        if (preg_match('/^\d{1,3}$/', $mask) === 1 && (int) $mask <= $max) {
            return new self($network, (int) $mask);
        }
        $packed = @inet_pton($mask);
        if ($packed === false || \strlen($packed) !== \strlen($network)) {
            return null;
        }
        $binary = '';
        foreach (str_split($packed) as $byte) {
            $binary .= str_pad(decbin(\ord($byte)), 8, '0', STR_PAD_LEFT);
        }
        $bits = strspn($binary, '1');
        return str_contains(substr($binary, $bits), '1') ? null : new self($network, $bits);
    }

    public function contains(string $ip): bool
    {
        $packed = @inet_pton($ip);
        if ($packed === false) {
            return false;
        }
        if (\strlen($packed) === 16 && \strlen($this->network) === 4 && str_starts_with($packed, str_repeat("\0", 10) . "\xff\xff")) {
            $packed = substr($packed, 12); // ::ffff:10.0.0.1 is 10.0.0.1
        }
        if (\strlen($packed) !== \strlen($this->network)) {
            return false;
        }
        $bytes = intdiv($this->bits, 8);
        if (strncmp($packed, $this->network, $bytes) !== 0) {
            return false;
        }
        $rest = $this->bits % 8;
        if ($rest === 0) {
            return true;
        }
        $mask = (0xFF << (8 - $rest)) & 0xFF;
        return (\ord($packed[$bytes]) & $mask) === (\ord($this->network[$bytes]) & $mask);
    }
}
