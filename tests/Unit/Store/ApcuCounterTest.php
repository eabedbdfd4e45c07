<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Store;

final class ApcuCounterTest extends CounterTestCase
{
    use ApcuBackend;
}
