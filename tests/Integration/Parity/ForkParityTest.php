<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Parity;

use Kiln\Tests\Support\KilnProcess;

/** `kiln serve SITE --tier=fork` (each script in a child forked from a warm fork server) answers like nginx + php-fpm. */
final class ForkParityTest extends ParityTestCase
{
    protected static function startSubject(string $site): ParityServer
    {
        return ParityServer::kiln('kiln --tier=fork', KilnProcess::start($site, ['--tier=fork']), "$site/public");
    }
}
