<?php
// Everything here is reset by the tier: globals, ini, headers, handlers, the time zone.
$visits = ($visits ?? 0) + 1;
ini_set('precision', '10');
header('X-Fixture: clean');
set_error_handler(static fn() => false);
date_default_timezone_set('Europe/Paris');
$closure = static function (): int {
    static $calls = 0; // a closure's statics die with the closure
    return ++$calls;
};
echo 'clean ', $visits, ' ', $closure();
