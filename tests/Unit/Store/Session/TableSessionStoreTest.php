<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Store\Session;

use Kiln\Tests\Unit\Store\TableBackend;

final class TableSessionStoreTest extends SessionStoreTestCase
{
    use TableBackend;
}
