<?php

declare(strict_types=1);

namespace Kiln\Tests\Support;

/** What a PHP run with given options of its own loads: for tests that run Kiln on a PHP without some extension. */
final class PhpExtensions
{
    /**
     * @param list<string> $php PHP's own options (`-n`, `-d extension=…`)
     * @return list<string> the extensions PHP run with $php loads, lower case
     */
    public static function loaded(array $php): array
    {
        $command = [PHP_BINARY, ...$php, '-r', 'echo implode("\n", get_loaded_extensions());'];
        exec(implode(' ', array_map(escapeshellarg(...), $command)) . ' 2>/dev/null', $lines);
        return array_map(strtolower(...), $lines);
    }
}
