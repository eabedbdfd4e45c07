<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Htaccess;

/** The .htaccess cases with scripts run by the sequential tier. */
final class SequentialHtaccessTest extends HtaccessServingTestCase
{
    protected static function tier(): string
    {
        return 'sequential';
    }

    public function testPhpValueAppliesToItsDirectorysScriptsOnlyAndIsResetAfter(): void
    {
        self::assertSame([200, '5'], $this->statusAndBody('/ini/show.php'), 'php_value precision 5 from ini/.htaccess');
        self::assertSame([200, '5'], $this->statusAndBody('/ini/show.php'), 'again on the next request');
        $elsewhere = $this->get('/precision.php');
        self::assertSame([200, '14'], [$elsewhere['status'], $elsewhere['body']], 'the worker\'s own precision is back for other scripts');
    }

    /** @return array{int, string} */
    private function statusAndBody(string $target): array
    {
        $response = $this->get($target);
        return [$response['status'], $response['body']];
    }
}
