<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Store;

use Kiln\Tests\Unit\Store\CacheTestCase;

final class RedisCacheTest extends CacheTestCase
{
    use RedisBackend;
}
