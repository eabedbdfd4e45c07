<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Site\Sequential\Engine;

use PHPUnit\Framework\TestCase;

/**
 * CommandLine::hide() changes what the process's own PHP keeps, so it runs in a PHP of its own here, started with
 * arguments: getopt() sees them before, false after, for a script without the global $argv; the entry script's
 * own $argv is left as it was, and $_SERVER loses the entries too.
 */
final class CommandLineTest extends TestCase
{
    public function testGetoptSaysFalseOnceTheCommandLineIsHidden(): void
    {
        if (!\extension_loaded('ffi')) {
            self::fail('needs ext-ffi: scripts/install-deps.sh installs it');
        }
        $script = <<<'PHP'
            require getenv('KILN_TEST_BOOTSTRAP');
            $before = getopt('', ['feeds']);
            $hidden = Kiln\Site\Sequential\Engine\CommandLine::hide();
            $again = Kiln\Site\Sequential\Engine\CommandLine::hide();
            $kept = $argv;
            unset($argv);
            echo json_encode([
                'before' => $before,
                'hidden' => $hidden,
                'again' => $again,
                'after' => getopt('', ['feeds']),
                'server' => array_key_exists('argv', $_SERVER) || array_key_exists('argc', $_SERVER),
                'kept' => $kept,
            ]);
            PHP;
        $command = [PHP_BINARY, '-d', 'ffi.enable=1', '-r', $script, '--', '--feeds'];
        $environment = ['KILN_TEST_BOOTSTRAP' => \dirname(__DIR__, 5) . '/src/bootstrap.php'] + getenv();
        $process = proc_open($command, [1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes, null, $environment);
        self::assertIsResource($process);
        $output = (string) stream_get_contents($pipes[1]);
        $errors = (string) stream_get_contents($pipes[2]);
        proc_close($process);
        $result = json_decode($output, true);
        self::assertIsArray($result, "$output\n$errors");
        self::assertSame(['feeds' => false], $result['before'], 'the arguments are seen before');
        self::assertTrue($result['hidden']);
        self::assertTrue($result['again'], 'asked twice, the same answer');
        self::assertFalse($result['after'], 'getopt() says false, as under a web SAPI');
        self::assertFalse($result['server'], '$_SERVER shares the array PHP keeps');
        self::assertSame(['Standard input code', '--feeds'], $result['kept'], 'the entry script keeps its own $argv');
    }
}
