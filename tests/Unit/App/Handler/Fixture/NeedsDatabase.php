<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\App\Handler\Fixture;

final class NeedsDatabase
{
    public function __construct(private readonly string $dsn) {}

    public function show(): string
    {
        return $this->dsn;
    }
}
