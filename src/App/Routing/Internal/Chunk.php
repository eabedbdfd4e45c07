<?php

declare(strict_types=1);

namespace Kiln\App\Routing\Internal;

use Kiln\App\Routing\Route;

/**
 * One grouped regex for several dynamic routes: `~^(?|re0(*MARK:0)|re1(*MARK:1)|...)$~`. The branch reset
 * `(?|` numbers each alternative's groups from 1, and the MARK names the alternative that matched.
 *
 * @internal
 */
final readonly class Chunk
{
    /** @param array<int, Route> $routes by mark */
    public function __construct(
        public string $regex,
        public array $routes,
    ) {}
}
