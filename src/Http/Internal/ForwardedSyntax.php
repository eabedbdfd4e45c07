<?php

declare(strict_types=1);

namespace Kiln\Http\Internal;

/**
 * The grammar of the forwarding headers: RFC 7239 `Forwarded` elements, X-Forwarded-* lists, node
 * addresses and forwarded hosts. Pure functions; ForwardedHeaders decides what to trust.
 *
 * @internal
 */
final class ForwardedSyntax
{
    private const PAIR = '/\G[ \t]*+([!#$%&\'*+\-.^_`|~0-9A-Za-z]++)=("(?:[^"\\\\]|\\\\.)*+"|[!#$%&\'*+\-.^_`|~0-9A-Za-z:\[\]]*+)[ \t]*+([;,]|\z)/';

    /**
     * Comma-separated items of one or more field lines, trimmed, empty ones dropped.
     *
     * @param list<string> $values
     * @return list<string>
     */
    public static function list(array $values): array
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
    public static function forwarded(string $value): ?array
    {
        $elements = [];
        $element = [];
        $offset = 0;
        $length = \strlen($value);
        while ($offset < $length) {
            if (preg_match('/\G[ \t]*+,/', $value, $m, 0, $offset) === 1) {
                $offset += \strlen($m[0]); // an empty list element
                continue;
            }
            if (preg_match(self::PAIR, $value, $m, 0, $offset) !== 1) {
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
    public static function node(string $node): ?string
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
    public static function host(string $value): ?array
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
