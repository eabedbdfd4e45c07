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

    public function testAPhpValueZoneAppliesAlsoAfterAScriptSetAZoneWithTheFunction(): void
    {
        $startup = $this->get('/show-zone.php')['body'];
        self::assertSame([200, 'Europe/Paris'], $this->statusAndBody('/zone/show.php'));
        self::assertSame([200, 'America/New_York'], $this->statusAndBody('/set-zone.php'), 'PHP keeps this zone until the process ends');
        self::assertSame([200, $startup], $this->statusAndBody('/show-zone.php'), 'undone after its script');
        self::assertSame([200, 'Europe/Paris'], $this->statusAndBody('/zone/show.php'), 'date.timezone from php_value still applies');
        self::assertSame([200, $startup], $this->statusAndBody('/show-zone.php'));
    }

    /** @return array{int, string} */
    private function statusAndBody(string $target): array
    {
        $response = $this->get($target);
        return [$response['status'], $response['body']];
    }
}
