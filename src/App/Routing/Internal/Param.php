<?php

declare(strict_types=1);

namespace Kiln\App\Routing\Internal;

/**
 * A `{name}` or `{name:regex}` placeholder. $regex has no capturing groups and escapes the `~` delimiter;
 * it is matched against the path as it is on the wire (percent-encoded).
 *
 * @internal
 */
final readonly class Param
{
    public function __construct(
        public string $name,
        public string $regex,
    ) {}

    /** Whether an already percent-encoded value fits the placeholder. */
    public function accepts(string $encoded): bool
    {
        return preg_match('~^(?:' . $this->regex . ')$~', $encoded) === 1;
    }
}
