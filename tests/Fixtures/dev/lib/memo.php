<?php
// A cache filled once per worker with the same value: nothing changes from the second request on.
function dev_fixture_memo(): int
{
    static $value = null;
    return $value ??= 42;
}

final class DevFixtureConfig
{
    private static ?array $settings = null;

    public static function get(): string
    {
        self::$settings ??= ['name' => 'fixture'];
        return self::$settings['name'];
    }
}
