<?php

declare(strict_types=1);

namespace Kiln\Http;

/**
 * A Set-Cookie to send (RFC 6265bis). The value is sent rawurlencode()d, as PHP's setcookie() encodes
 * it (with %20 for a space, not "+"), and Request::cookies() decodes it again, as $_COOKIE does. Defaults
 * are the safe ones: Path=/, HttpOnly, SameSite=Lax. SameSite=None and Partitioned need Secure; the
 * __Secure- prefix needs Secure, and __Host- also Path=/ and no Domain: anything else is a \ValueError.
 */
final class Cookie
{
    public const SAME_SITE_LAX = 'Lax';
    public const SAME_SITE_STRICT = 'Strict';
    public const SAME_SITE_NONE = 'None';

    private const TOKEN = '/\A[!#$%&\'*+\-.^_`|~0-9A-Za-z]+\z/';

    public readonly ?string $sameSite;

    public function __construct(
        public readonly string $name,
        public readonly string $value = '',
        public readonly \DateTimeInterface|int|null $expires = null,
        public readonly ?int $maxAge = null,
        public readonly ?string $path = '/',
        public readonly ?string $domain = null,
        public readonly bool $secure = false,
        public readonly bool $httpOnly = true,
        ?string $sameSite = self::SAME_SITE_LAX,
        public readonly bool $partitioned = false,
    ) {
        if (preg_match(self::TOKEN, $name) !== 1) {
            throw new \ValueError("Invalid cookie name '" . addcslashes($name, "\0..\37\177") . "': use token characters only (no spaces, '=', ';', ',')");
        }
        foreach (['path' => $path, 'domain' => $domain] as $attribute => $text) {
            if ($text !== null && ($text === '' || preg_match('/[\x00-\x1F\x7F;,]/', $text) === 1)) {
                throw new \ValueError("Cookie $attribute must be non-empty, without control characters, ';' or ','");
            }
        }
        $this->sameSite = match ($sameSite === null ? null : strtolower($sameSite)) {
            null => null,
            'lax' => self::SAME_SITE_LAX,
            'strict' => self::SAME_SITE_STRICT,
            'none' => self::SAME_SITE_NONE,
            default => throw new \ValueError("SameSite is Lax, Strict or None, got '$sameSite'"),
        };
        if (!$secure && ($this->sameSite === self::SAME_SITE_NONE || $partitioned || str_starts_with($name, '__Secure-') || str_starts_with($name, '__Host-'))) {
            throw new \ValueError("Cookie '$name' needs secure: true (SameSite=None, Partitioned and the __Secure-/__Host- prefixes require it)");
        }
        if (str_starts_with($name, '__Host-') && ($path !== '/' || $domain !== null)) {
            throw new \ValueError("Cookie '$name' (__Host- prefix) needs path '/' and no domain");
        }
    }

    /** A cookie that makes the browser drop the one with this name, path and domain. */
    public static function expired(string $name, ?string $path = '/', ?string $domain = null): self
    {
        $secure = str_starts_with($name, '__Secure-') || str_starts_with($name, '__Host-');
        return new self($name, '', 0, 0, $path, $domain, $secure, false, null);
    }

    public function headerValue(): string
    {
        $out = $this->name . '=' . rawurlencode($this->value);
        if ($this->expires !== null) {
            $time = \is_int($this->expires) ? $this->expires : $this->expires->getTimestamp();
            $out .= '; Expires=' . gmdate('D, d M Y H:i:s', $time) . ' GMT';
        }
        if ($this->maxAge !== null) {
            $out .= '; Max-Age=' . max(0, $this->maxAge);
        }
        $out .= ($this->path !== null ? '; Path=' . $this->path : '') . ($this->domain !== null ? '; Domain=' . $this->domain : '');
        $out .= ($this->secure ? '; Secure' : '') . ($this->httpOnly ? '; HttpOnly' : '');
        $out .= ($this->sameSite !== null ? '; SameSite=' . $this->sameSite : '') . ($this->partitioned ? '; Partitioned' : '');
        return $out;
    }

    /**
     * Parses Cookie header values into name => value: pairs split on ";", names must be tokens, a value
     * in double quotes loses them, values are urldecode()d as in $_COOKIE (names are not mangled, unlike
     * $_COOKIE's "." to "_"). Malformed pairs are skipped; the first value of a name wins.
     *
     * @param list<string> $headers
     * @return array<string, string>
     */
    public static function parseHeader(array $headers): array
    {
        $cookies = [];
        foreach ($headers as $header) {
            foreach (explode(';', $header) as $pair) {
                $eq = strpos($pair, '=');
                if ($eq === false) {
                    continue;
                }
                $name = trim(substr($pair, 0, $eq), " \t");
                $value = trim(substr($pair, $eq + 1), " \t");
                if (\strlen($value) >= 2 && $value[0] === '"' && $value[-1] === '"') {
                    $value = substr($value, 1, -1);
                }
                if (preg_match(self::TOKEN, $name) !== 1 || isset($cookies[$name]) || preg_match('/[\x00-\x1F\x7F"]/', $value) === 1) {
                    continue;
                }
                $cookies[$name] = urldecode($value);
            }
        }
        return $cookies;
    }
}
