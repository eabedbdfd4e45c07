<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Store;

use Kiln\Tests\Unit\Store\LockTestCase;

final class RedisLockTest extends LockTestCase
{
    use RedisBackend;
}
