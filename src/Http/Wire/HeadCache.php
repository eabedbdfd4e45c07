<?php

declare(strict_types=1);

namespace Kiln\Http\Wire;

use Kiln\Http\Limits;

/**
 * Request heads already parsed, by their exact bytes: a client that sends the same head again (a keep-alive
 * connection polling one URL, a load balancer's health check, a benchmark) gets the same RequestHead without
 * a second parse.
 *
 * Exact: the key is the whole head, from the request line to the empty line that ends it, so a hit is the
 * result of parsing those very bytes under the same Limits (a cache belongs to one Limits). Only heads the
 * parser accepted and that announce no body are kept: a refused head is never stored, so it is refused again
 * by a full parse, and a body's framing is never taken from the cache. RequestHead is immutable, so one
 * instance is safely shared by every request made from it.
 *
 * Bounded: at most $capacity heads of at most MAX_KEY bytes each; past it the oldest is dropped.
 */
final class HeadCache
{
    /** Longest head kept (bytes, the final empty line included). */
    public const MAX_KEY = 2048;

    /** @var array<string, RequestHead> */
    private array $heads = [];

    public function __construct(public readonly Limits $limits, private readonly int $capacity = 64)
    {
        if ($capacity < 1) {
            throw new \ValueError("A head cache holds at least one head, got capacity $capacity");
        }
    }

    /** The head parsed from exactly these bytes (request line to the final CRLFCRLF), if kept. */
    public function get(string $bytes): ?RequestHead
    {
        return $this->heads[$bytes] ?? null;
    }

    /**
     * Keeps a head the parser accepted from $bytes. Ignored when it has a body or the bytes are too long.
     *
     * @internal called by RequestParser only: $head must be what parsing $bytes under $this->limits gave
     */
    public function put(string $bytes, RequestHead $head): void
    {
        if ($head->bodyKind !== RequestHead::BODY_NONE || \strlen($bytes) > self::MAX_KEY || isset($this->heads[$bytes])) {
            return;
        }
        if (\count($this->heads) >= $this->capacity) {
            unset($this->heads[\array_key_first($this->heads)]);
        }
        $this->heads[$bytes] = $head;
    }

    public function count(): int
    {
        return \count($this->heads);
    }
}
