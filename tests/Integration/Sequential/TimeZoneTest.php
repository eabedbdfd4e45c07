<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Sequential;

/**
 * A script's time zone holds for its own request and does not leak into the next (the .htaccess php_value case is
 * SequentialHtaccessTest's).
 */
final class TimeZoneTest extends SequentialTestCase
{
    public function testAZoneChosenThroughTheSettingHoldsOnEveryRequest(): void
    {
        $startup = $this->get('/zone/show.php')['body'];
        foreach (['Asia/Tokyo', 'Asia/Tokyo', 'Europe/Lisbon'] as $zone) {
            self::assertSame($zone, $this->get('/zone/setting.php?zone=' . urlencode($zone))['body']);
            self::assertSame($startup, $this->get('/zone/show.php')['body'], 'undone after the script');
        }
    }
}
