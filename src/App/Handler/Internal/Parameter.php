<?php

declare(strict_types=1);

namespace Kiln\App\Handler\Internal;

/**
 * One handler parameter, analysed once.
 *
 * @internal
 */
final class Parameter
{
    /**
     * @param list<ScalarType> $types for a route parameter: accepted types, tried in this order
     * @param bool $optional whether an absent route parameter may be filled with $default
     */
    public function __construct(
        public readonly string $name,
        public readonly ParameterSource $source,
        public readonly array $types = [],
        public readonly bool $optional = false,
        public readonly mixed $default = null,
    ) {}
}
