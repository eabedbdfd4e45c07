<?php

declare(strict_types=1);

namespace Kiln\App;

/** Which worker a hook runs in: its number (1 to --workers, kept by its replacements) and its process id. */
final class WorkerInfo
{
    public function __construct(
        public readonly int $number,
        public readonly int $pid,
    ) {}
}
