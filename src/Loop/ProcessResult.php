<?php

declare(strict_types=1);

namespace Kiln\Loop;

/** What Process::run() collected. $exitCode is 128 + the signal number when a signal ended the child. */
final class ProcessResult
{
    public function __construct(
        public readonly int $exitCode,
        public readonly string $stdout,
        public readonly string $stderr,
    ) {}

    public function isSuccessful(): bool
    {
        return $this->exitCode === 0;
    }
}
