<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Htaccess;

/** The .htaccess cases with scripts run by the isolated tier. */
final class IsolatedHtaccessTest extends HtaccessServingTestCase
{
    protected static function tier(): string
    {
        return 'isolated';
    }
}
