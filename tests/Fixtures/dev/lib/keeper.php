<?php
final class DevFixtureKeeper
{
    /** @var list<string> */
    private static array $kept = [];

    public static function keep(string $row): void
    {
        self::$kept[] = $row;
    }
}
