<?php

declare(strict_types=1);

namespace Kiln\Isolation\Cgi;

/**
 * Parsed header blocks by their bytes, for a CgiResponseParser per response of one long-lived caller: a
 * script sends the same block on most requests (`Content-type: text/html; charset=UTF-8`), and parsing it
 * costs more than the rest of the response's handling in the gateway. A CgiHead is immutable, so one can
 * be shared. Holds at most $entries blocks of at most MAX_BLOCK bytes each (the oldest goes first); blocks
 * that vary per request (a new session cookie) just pass through. Only blocks that parsed are kept.
 */
final class CgiHeadCache
{
    public const MAX_BLOCK = 1024;

    /** @var array<string, CgiHead> */
    private array $heads = [];

    public function __construct(private readonly int $entries = 16)
    {
        if ($entries < 1) {
            throw new \ValueError('A CgiHeadCache holds at least 1 entry');
        }
    }

    public function get(string $block): ?CgiHead
    {
        return $this->heads[$block] ?? null;
    }

    public function put(string $block, CgiHead $head): void
    {
        if (\strlen($block) > self::MAX_BLOCK) {
            return;
        }
        if (\count($this->heads) >= $this->entries) {
            unset($this->heads[\array_key_first($this->heads)]);
        }
        $this->heads[$block] = $head;
    }
}
