<?php

declare(strict_types=1);

namespace Kiln\Site\Sequential;

use Kiln\Site\Sequential\Engine\GlobalScope;

/**
 * An exception a script did not catch, written as PHP writes one (`(string) $e`) but with the stack trace
 * ending where the script began: the frames of Kiln that include the script (the worker's loop, the
 * connection, the runner) are cut, and `{main}` stands for them, as it does under php-fpm, where the script
 * is the main one. Each exception of a `previous` chain is cut the same way.
 */
final class ScriptTrace
{
    public static function of(\Throwable $error): string
    {
        $parts = [];
        for ($e = $error; $e !== null; $e = $e->getPrevious()) {
            $parts[] = $e::class . ($e->getMessage() === '' ? '' : ': ' . $e->getMessage())
                . ' in ' . $e->getFile() . ':' . $e->getLine() . "\nStack trace:\n" . self::frames($e->getTraceAsString());
        }
        return implode("\n\nNext ", array_reverse($parts));
    }

    /**
     * The lines of a trace up to the frame where Kiln's include.php includes the script, then `{main}`. An error
     * thrown as the script is compiled (a ParseError of the script itself) has no frame of the script: its trace
     * begins at the include of include.php in GlobalScope, which is cut the same way.
     */
    private static function frames(string $trace): string
    {
        $kept = [];
        $scope = ' ' . GlobalScope::FILE . '(';
        foreach (explode("\n", $trace) as $line) {
            if (str_contains($line, ' ' . GlobalScope::INCLUDE . '(') || (str_contains($line, $scope) && str_ends_with($line, '): include()'))
                || preg_match('/^#\d+ \{main\}$/', $line) === 1) {
                break;
            }
            $kept[] = $line;
        }
        $kept[] = '#' . \count($kept) . ' {main}';
        return implode("\n", $kept);
    }
}
