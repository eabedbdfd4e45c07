<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Parity;

use Kiln\Tests\Support\KilnProcess;

/** `kiln serve SITE --tier=sequential` (PHP in the warm worker, one request at a time) answers like nginx + php-fpm. */
final class SequentialParityTest extends ParityTestCase
{
    protected static function startSubject(string $site): ParityServer
    {
        return ParityServer::kiln('kiln --tier=sequential', KilnProcess::start($site, ['--tier=sequential']), "$site/public");
    }
}
