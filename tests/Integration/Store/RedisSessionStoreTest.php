<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Store;

use Kiln\Tests\Unit\Store\Session\SessionStoreTestCase;

final class RedisSessionStoreTest extends SessionStoreTestCase
{
    use RedisBackend;
}
