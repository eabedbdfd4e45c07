<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\App\Handler\Fixture;

abstract class AbstractController
{
    public function show(): string
    {
        return 'never';
    }
}
