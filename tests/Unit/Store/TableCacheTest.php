<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Store;

final class TableCacheTest extends CacheTestCase
{
    use TableBackend;
}
