<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Store;

use Kiln\Tests\Unit\Store\CounterTestCase;

final class RedisCounterTest extends CounterTestCase
{
    use RedisBackend;
}
