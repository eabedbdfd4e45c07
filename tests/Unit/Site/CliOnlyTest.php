<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Site;

use Kiln\Site\CliOnly;
use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;

final class CliOnlyTest extends TestCase
{
    /** @return array<string, array{string}> */
    public static function guarded(): array
    {
        return [
            'php_sapi_name() != cli, die in a block' => ["<?php\nif (php_sapi_name() != 'cli') {\n    die('command line only');\n}\npoll();"],
            'PHP_SAPI !== "cli", exit without a block' => ["<?php\nif (PHP_SAPI !== \"cli\") exit(1);\npoll();"],
            'a negated in_array of SAPIs, then a message and exit' => ["<?php\nif (!in_array(PHP_SAPI, ['cli', 'phpdbg'], true)) {\n    echo 'no';\n    exit;\n}"],
            'fully qualified, throw' => ["<?php\nnamespace App;\nif (\\php_sapi_name() !== 'cli') { throw new \\RuntimeException('cli'); }"],
            'return from the top level' => ["<?php\nif (PHP_SAPI != 'cli') { return; }\nrun();"],
            'or die' => ["<?php\nPHP_SAPI === 'cli' or die('cli only');\nrun();"],
            '&& exit' => ["<?php\nphp_sapi_name() !== 'cli' && exit('cli only');"],
            'STDIN not defined' => ["<?php\nif (!defined('STDIN')) {\n    die('Run me from a shell');\n}"],
            'after declarations and includes' => ["<?php\ninclude './lib.php';\nfunction f() {}\nif (php_sapi_name() != 'cli') {\n    print 'x';\n    die;\n}"],
        ];
    }

    /** @return array<string, array{string}> */
    public static function notGuarded(): array
    {
        return [
            'no SAPI test' => ["<?php\necho 'hello';"],
            'a SAPI test that only picks the line break' => ["<?php\n\$eol = PHP_SAPI === 'cli' ? \"\\n\" : '<br>';\necho \$eol;"],
            'a negated test whose block does not stop' => ["<?php\nif (PHP_SAPI !== 'cli') {\n    header('Content-Type: text/plain');\n}\necho 'x';"],
            'stops on the command line: a web-only script' => ["<?php\nif (PHP_SAPI === 'cli') {\n    exit('open me in a browser');\n}"],
            'the else branch stops' => ["<?php\nif (PHP_SAPI != 'cli') {\n    \$web = true;\n} else {\n    exit;\n}"],
            'a guard inside a function' => ["<?php\nfunction main() {\n    if (php_sapi_name() != 'cli') { exit; }\n}\necho 'page';"],
            'another SAPI than cli' => ["<?php\nif (PHP_SAPI !== 'fpm-fcgi') { exit; }"],
            'in a comment only' => ["<?php\n// if (php_sapi_name() != 'cli') die();\necho 'x';"],
            'does not parse' => ["<?php\nif (php_sapi_name() != 'cli' { die(); }"],
            'a closure in the block returns' => ["<?php\nif (PHP_SAPI !== 'cli') {\n    ob_start(function (\$b) { return \$b; });\n}\necho 'page';"],
            'a page\'s own branch that also tests a variable' => ["<?php\nif (PHP_SAPI !== 'cli' && !empty(\$_GET['ajax'])) {\n    echo '{}';\n    exit;\n}"],
            'or die with a message that depends on the SAPI' => ["<?php\n\$db = mysqli_connect('h') or die(PHP_SAPI === 'cli' ? \"x\\n\" : '<b>x</b>');"],
            'and die on the command line: a web-only script' => ["<?php\nPHP_SAPI === 'cli' and die('web only');"],
            'an inner condition stops' => ["<?php\nif (PHP_SAPI != 'cli') {\n    if (\$maintenance) {\n        exit;\n    }\n    render();\n}"],
        ];
    }

    #[DataProvider('guarded')]
    public function testAGuardAgainstWebServersIsFound(string $source): void
    {
        self::assertTrue(CliOnly::inSource($source));
    }

    #[DataProvider('notGuarded')]
    public function testOtherUsesOfTheSapiAreNotGuards(string $source): void
    {
        self::assertFalse(CliOnly::inSource($source));
    }
}
