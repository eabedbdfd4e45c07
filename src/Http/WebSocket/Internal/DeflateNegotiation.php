<?php

declare(strict_types=1);

namespace Kiln\Http\WebSocket\Internal;

use Kiln\Http\WebSocket\DeflateOptions;
use Kiln\Http\WebSocket\PerMessageDeflate;

/**
 * Picks the first permessage-deflate offer of Sec-WebSocket-Extensions the server can accept (RFC 7692 §5,
 * §7.1) and words the answer. An offer with an unknown, repeated or malformed parameter is declined and the
 * next one tried; a header that does not parse at all declines them all. Neither is an error: the connection
 * then runs without compression.
 *
 * An offer of server_max_window_bits=8 is declined: zlib cannot make a raw deflate stream with a 256-byte
 * window (it would silently use 512, which the client could not inflate), and §7.1.2.1 allows declining.
 * client_max_window_bits=8 is accepted and the server inflates with 9 bits: a larger window reads any
 * stream made with a smaller one.
 *
 * @internal
 */
final class DeflateNegotiation
{
    private const TOKEN = '[!#$%&\'*+.^_`|~0-9A-Za-z-]+';

    /**
     * @param list<string> $fields the Sec-WebSocket-Extensions header fields
     * @return array{PerMessageDeflate, string}|null the state and the response header, or null to decline
     */
    public static function negotiate(array $fields, DeflateOptions $options): ?array
    {
        foreach (self::offers($fields) ?? [] as [$name, $params]) {
            if ($params !== null && strcasecmp($name, 'permessage-deflate') === 0) {
                $agreed = self::accept($params, $options);
                if ($agreed !== null) {
                    return $agreed;
                }
            }
        }
        return null;
    }

    /**
     * Parses extension offers (RFC 6455 §9.1: extension *( ";" param [ "=" ( token / quoted-string ) ] ),
     * comma-separated, over one or several fields).
     *
     * @param list<string> $fields
     * @return list<array{string, array<string, string|true>|null}>|null per offer its name and parameters
     *         (lower-cased names; true for a parameter without value; null when one is repeated), or null
     *         when the header does not parse
     */
    public static function offers(array $fields): ?array
    {
        $offers = [];
        $piece = '/\G[ \t]*(?:([,;])|(' . self::TOKEN . ')(?:[ \t]*=[ \t]*(?:(' . self::TOKEN . ')|"((?:[^"\\\\]|\\\\.)*)"))?)[ \t]*/';
        $name = null;
        /** @var array<string, string|true>|null $params */
        $params = [];
        foreach ($fields as $field) {
            $expectParam = false;
            $offset = 0;
            $length = \strlen($field);
            while ($offset < $length) {
                if (preg_match($piece, $field, $m, \PREG_UNMATCHED_AS_NULL, $offset) !== 1) {
                    return null;
                }
                $offset += \strlen((string) $m[0]);
                [, $separator, $token, $plain, $quoted] = $m + [null, null, null, null, null];
                if ($separator === ';' && $name !== null && !$expectParam) {
                    $expectParam = true;
                } elseif ($separator === ',' && !$expectParam) {
                    if ($name !== null) {
                        $offers[] = [$name, $params];
                    }
                    $name = null;
                } elseif ($token !== null && $name === null && $plain === null && $quoted === null) {
                    $name = $token;
                    /** @var array<string, string|true>|null $params */
                    $params = [];
                } elseif ($token !== null && $expectParam) {
                    $key = strtolower($token);
                    $value = $quoted !== null ? (string) preg_replace('/\\\\(.)/s', '$1', $quoted) : ($plain ?? true);
                    $params = $params === null || isset($params[$key]) ? null : $params + [$key => $value];
                    $expectParam = false;
                } else {
                    return null;
                }
            }
            if ($expectParam) {
                return null;
            }
            if ($name !== null) {
                $offers[] = [$name, $params];
            }
            $name = null;
        }
        return $offers;
    }

    /**
     * @param array<string, string|true> $params
     * @return array{PerMessageDeflate, string}|null
     */
    private static function accept(array $params, DeflateOptions $options): ?array
    {
        $serverNoContextTakeover = $options->serverNoContextTakeover;
        $serverBits = $options->serverMaxWindowBits;
        $statesServerBits = $serverBits < 15;
        $clientBits = null; // null: the client did not offer client_max_window_bits, so it may use 15
        foreach ($params as $name => $value) {
            switch ($name) {
                case 'server_no_context_takeover':
                case 'client_no_context_takeover':
                    if ($value !== true) {
                        return null;
                    }
                    // The client's client_no_context_takeover is a hint only: nothing to do with it.
                    $serverNoContextTakeover = $serverNoContextTakeover || $name === 'server_no_context_takeover';
                    break;
                case 'server_max_window_bits':
                    $bits = \is_string($value) ? self::windowBits($value) : null;
                    if ($bits === null || $bits === 8) {
                        return null;
                    }
                    $serverBits = min($serverBits, $bits);
                    $statesServerBits = true;
                    break;
                case 'client_max_window_bits':
                    $bits = $value === true ? 15 : self::windowBits($value);
                    if ($bits === null) {
                        return null;
                    }
                    $clientBits = min($options->clientMaxWindowBits, $bits);
                    break;
                default:
                    return null;
            }
        }
        $header = 'permessage-deflate';
        if ($serverNoContextTakeover) {
            $header .= '; server_no_context_takeover';
        }
        if ($options->clientNoContextTakeover) {
            $header .= '; client_no_context_takeover';
        }
        if ($statesServerBits) {
            $header .= '; server_max_window_bits=' . $serverBits;
        }
        if ($clientBits !== null && ($clientBits < 15 || \is_string($params['client_max_window_bits'] ?? null))) {
            $header .= '; client_max_window_bits=' . $clientBits;
        }
        $deflate = new PerMessageDeflate(
            $serverNoContextTakeover,
            $options->clientNoContextTakeover,
            $serverBits,
            max(9, $clientBits ?? 15),
            $options->compressionLevel,
            $options->memoryLevel,
        );
        return [$deflate, $header];
    }

    /** 8 to 15 written without leading zero (RFC 7692 §7.1.2), else null. */
    private static function windowBits(string $value): ?int
    {
        return preg_match('/^(?:[89]|1[0-5])$/D', $value) === 1 ? (int) $value : null;
    }
}
