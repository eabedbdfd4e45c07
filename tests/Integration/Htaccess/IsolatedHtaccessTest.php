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

    public function testPhpValueIsReportedOnceSincePhpCgiIgnoresIt(): void
    {
        for ($i = 0; $i < 2; $i++) {
            $response = $this->get('/ini/show.php');
            self::assertSame([200, '14'], [$response['status'], $response['body']], 'php.ini default precision');
        }
        self::server()->waitForLog('~php_value precision .*not applied by the isolated tier~', 5.0);
        self::assertSame(1, substr_count(self::server()->log(), 'php_value precision'));
    }
}
