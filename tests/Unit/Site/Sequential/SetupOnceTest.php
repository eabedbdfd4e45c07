<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Site\Sequential;

use Kiln\Site\Sequential\SetupOnce;
use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;

final class SetupOnceTest extends TestCase
{
    /** @return iterable<string, array{string, string}> */
    public static function setUpTheRequest(): iterable
    {
        yield 'session_start' => ['<?php session_start();', 'session_start'];
        yield 'in a guard' => ['<?php if (!defined("X")) { define("X", 1); session_name("app"); session_start(); }', 'session_name'];
        yield 'fully qualified' => ['<?php \\header("X-A: b");', 'header'];
        yield 'in a braced namespace' => ['<?php namespace A { setcookie("a", "b"); }', 'setcookie'];
        yield 'after an abstract method' => ['<?php abstract class A { abstract function f(); } ob_start();', 'ob_start'];
        yield 'after a function' => ['<?php function f() { return 1; } http_response_code(201);', 'http_response_code'];
    }

    /** @return iterable<string, array{string}> */
    public static function setsUpNothing(): iterable
    {
        yield 'in a function' => ['<?php function f() { session_start(); }'];
        yield 'in a method' => ['<?php class A { public function b() { header("X: y"); } }'];
        yield 'in a closure' => ['<?php $f = function () use ($x) { header("X: y"); };'];
        yield 'methods named like them' => ['<?php $o->header("x"); A::header("x"); $o?->session_start();'];
        yield 'a declaration' => ['<?php function header_line() {} use function header;'];
        yield 'a declaration by reference' => ['<?php namespace N; function &session_start() { static $a; return $a; }'];
        yield 'an attribute' => ['<?php #[Header("x"), Route(["a" => [1]])] final class A {}'];
        yield 'a name, not a call' => ['<?php $h = "header"; const HEADER = 1; echo header;'];
        yield 'other calls' => ['<?php header_remove(); headers_sent(); session_status();'];
        yield 'not PHP' => ['<?php session_start('];
    }

    #[DataProvider('setUpTheRequest')]
    public function testACallOutsideAnyFunctionIsFound(string $source, string $call): void
    {
        self::assertSame($call, SetupOnce::setupCall($source));
    }

    #[DataProvider('setsUpNothing')]
    public function testNothingIsFoundWhenNoSuchCallRunsAtLoad(string $source): void
    {
        self::assertNull(SetupOnce::setupCall($source));
    }

    public function testEachFileThatDeclaresAndSetsUpIsReportedOncePureFilesAndTheScriptNever(): void
    {
        $dir = sys_get_temp_dir() . '/kiln-setup-once-' . getmypid();
        @mkdir($dir);
        $boot = "$dir/boot.php";
        $pure = "$dir/pure.php";
        $script = "$dir/page.php";
        file_put_contents($boot, '<?php function kiln_boot() {} session_start();');
        file_put_contents($pure, '<?php session_start();'); // declares nothing: runs again on every request
        file_put_contents($script, '<?php function kiln_page() {} header("X: y");');
        $logged = [];
        $once = new SetupOnce(static function (string $level, string $message) use (&$logged): void {
            $logged[] = "$level $message";
        });
        try {
            $once->check([$script, $pure, $boot], $script);
            $once->check([$boot], $script);
        } finally {
            array_map('unlink', [$boot, $pure, $script]);
            rmdir($dir);
        }
        self::assertCount(1, $logged, implode("\n", $logged));
        self::assertStringStartsWith("warning $boot declares functions, classes or constants", $logged[0]);
        self::assertStringContainsString('calls session_start() outside any function', $logged[0]);
    }
}
