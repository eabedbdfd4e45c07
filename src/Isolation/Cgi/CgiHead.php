<?php

declare(strict_types=1);

namespace Kiln\Isolation\Cgi;

/**
 * The parsed header block of a CGI response. `Status` is consumed into $status/$reason and is not in
 * $headers; every other field is kept, in the order written, with its name as written (multiple
 * `Set-Cookie` stay separate entries). Names compare case-insensitively through header()/headerValues().
 */
final class CgiHead
{
    /** Hop-by-hop fields a gateway must not forward as the script wrote them (RFC 9110 §7.6.1). */
    public const HOP_BY_HOP = ['connection', 'keep-alive', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade'];

    /** HOP_BY_HOP, as keys: what forwardedHeaders() leaves out. */
    private const NOT_FORWARDED = ['connection' => true, 'keep-alive' => true, 'proxy-connection' => true,
        'te' => true, 'trailer' => true, 'transfer-encoding' => true, 'upgrade' => true];

    /**
     * forwardedHeaders(), made once: a head may be shared by many responses (CgiHeadCache).
     *
     * @var list<array{0: string, 1: string}>|null
     */
    private ?array $forwarded = null;

    /**
     * @param list<array{0: string, 1: string}> $headers [name, value] pairs
     */
    public function __construct(
        /** From `Status:`; else 302 when there is a `Location`; else 200. */
        public readonly int $status,
        /** The reason phrase from `Status:`, '' when none was given. */
        public readonly string $reason,
        public readonly array $headers,
        /** Whether the script sent a `Status` field. */
        public readonly bool $hasStatus,
        /** The `Location` value, null when none. */
        public readonly ?string $location,
        public readonly CgiRedirect $redirect,
    ) {}

    /** The first value of a field (name case-insensitive), null when absent. */
    public function header(string $name): ?string
    {
        $name = \strtolower($name);
        foreach ($this->headers as [$n, $v]) {
            if (\strtolower($n) === $name) {
                return $v;
            }
        }

        return null;
    }

    /** @return list<string> every value of a field, in order */
    public function headerValues(string $name): array
    {
        $name = \strtolower($name);
        $values = [];
        foreach ($this->headers as [$n, $v]) {
            if (\strtolower($n) === $name) {
                $values[] = $v;
            }
        }

        return $values;
    }

    /**
     * The fields to put on the client response: $headers without hop-by-hop fields, `Content-Type` spelled so
     * whatever the script wrote (PHP writes `Content-type`), as Apache and nginx send it. `Content-Length` stays:
     * the server frames the body itself, by the script's length when it streams it (Response::declaredLength()).
     *
     * @return list<array{0: string, 1: string}>
     */
    public function forwardedHeaders(): array
    {
        if ($this->forwarded !== null) {
            return $this->forwarded;
        }
        $out = [];
        foreach ($this->headers as $field) {
            $lower = \strtolower($field[0]);
            if ($lower === 'content-type') {
                $out[] = ['Content-Type', $field[1]]; // PHP writes `Content-type`; Apache and nginx send `Content-Type`
            } elseif (!isset(self::NOT_FORWARDED[$lower])) {
                $out[] = $field;
            }
        }

        return $this->forwarded = $out;
    }
}
