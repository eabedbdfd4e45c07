<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Loop;

use Kiln\Loop\Driver;
use Kiln\Loop\Driver\SelectDriver;

final class SelectDriverTest extends DriverTestCase
{
    protected function createDriver(): Driver
    {
        return new SelectDriver();
    }

    public function testCapacityStaysBelowFdSetSize(): void
    {
        self::assertSame(1024 - 64, $this->loop->capacity());
    }
}
