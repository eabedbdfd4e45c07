<?php

declare(strict_types=1);

// Everything PHP keeps for the life of a process, changed on every request: php-cgi must reset it all.
// (The function and class are declared unconditionally: in a process that kept them, PHP would fail with
// "Cannot redeclare".)
$fresh = !defined('KILN_DEFINED') && !isset($GLOBALS['kiln_global']) && ini_get('precision') !== '5';
define('KILN_DEFINED', true);
function kiln_declared(): int
{
    static $calls = 0;
    return ++$calls;
}
class KilnDeclared
{
    public static int $count = 0;
}
KilnDeclared::$count++;
$GLOBALS['kiln_global'] = ($GLOBALS['kiln_global'] ?? 0) + 1;
$precision = ini_get('precision');
ini_set('precision', '5');
header('Content-Type: application/json');
echo json_encode([
    'fresh' => $fresh,
    'static' => kiln_declared(),
    'classStatic' => KilnDeclared::$count,
    'global' => $GLOBALS['kiln_global'],
    'precisionBefore' => $precision,
    'pid' => getmypid(),
    'opcache' => function_exists('opcache_get_status') && (opcache_get_status(false)['opcache_enabled'] ?? false),
]);
