<?php

declare(strict_types=1);

namespace Kiln\App\Handler\Internal;

/**
 * A handler resolved to something callable, with its signature.
 *
 * @internal
 */
final class Resolved
{
    /**
     * @param class-string|null $instanceOf a class whose worker-wide instance the method is called on;
     *                                      null when the handler value itself is callable as it is
     */
    public function __construct(
        public readonly Signature $signature,
        public readonly ?string $instanceOf = null,
        public readonly string $method = '',
    ) {}
}
