<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Store\Session;

use Kiln\Tests\Unit\Store\ApcuBackend;

final class ApcuSessionStoreTest extends SessionStoreTestCase
{
    use ApcuBackend;
}
