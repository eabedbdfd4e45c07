<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Parity;

/**
 * The harness proven on itself: nginx + php-fpm against a second nginx + php-fpm (with kept FastCGI connections)
 * must agree on every case, so any difference a Kiln tier shows is the tier's, not the harness's.
 */
final class NginxFpmSelfParityTest extends ParityTestCase
{
    protected static function startSubject(string $site): ParityServer
    {
        return ParityServer::nginxFpm("$site/public", keepConn: true);
    }
}
