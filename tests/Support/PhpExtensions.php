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

    /**
     * PHP's own options for a PHP without FFI: `-n` (no php.ini, so no shared extension), then the extensions
     * $needed loaded again by name from this PHP's extension_dir unless built in; zend.assertions as here.
     *
     * @param list<string> $needed
     * @return list<string>|string the options, or why such a PHP cannot be had here: FFI built into this PHP, which
     *     -n cannot leave out (Debian builds it as a shared extension)
     * @throws \RuntimeException when an extension of $needed will not load without php.ini, or FFI loads all the same:
     *     a broken install, not a PHP that lacks something
     */
    public static function withoutFfi(array $needed): array|string
    {
        $php = ['-n', '-d', 'extension_dir=' . \ini_get('extension_dir'), '-d', 'zend.assertions=' . \ini_get('zend.assertions')];
        $builtIn = self::loaded($php);
        if (\in_array('ffi', $builtIn, true)) {
            return 'FFI is built into this PHP: -n cannot leave it out';
        }
        foreach ($needed as $extension) {
            if (!\in_array($extension, $builtIn, true)) {
                array_push($php, '-d', "extension=$extension");
            }
        }
        $loaded = self::loaded($php);
        foreach ($needed as $extension) {
            if (!\in_array($extension, $loaded, true)) {
                throw new \RuntimeException("PHP without php.ini cannot load $extension from " . \ini_get('extension_dir'));
            }
        }
        return \in_array('ffi', $loaded, true) ? throw new \RuntimeException('FFI is loaded even with -n') : $php;
    }
}
