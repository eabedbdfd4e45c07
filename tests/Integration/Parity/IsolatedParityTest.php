<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Parity;

use Kiln\Tests\Support\KilnProcess;

/** `kiln serve SITE --tier=isolated` (a supervised php-cgi pool over FastCGI) answers like nginx + php-fpm. */
final class IsolatedParityTest extends ParityTestCase
{
    protected static function startSubject(string $site): ParityServer
    {
        return ParityServer::kiln('kiln --tier=isolated', KilnProcess::start($site, ['--tier=isolated']), "$site/public");
    }
}
