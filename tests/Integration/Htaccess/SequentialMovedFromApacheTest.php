<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Htaccess;

/** What a site moved from Apache relies on, with scripts run by the sequential tier. */
final class SequentialMovedFromApacheTest extends MovedFromApacheTestCase
{
    protected static function tier(): string
    {
        return 'sequential';
    }
}
