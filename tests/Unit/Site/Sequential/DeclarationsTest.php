<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Site\Sequential;

use Kiln\Site\Sequential\Declarations;
use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;

final class DeclarationsTest extends TestCase
{
    /** @return iterable<string, array{string}> */
    public static function declaring(): iterable
    {
        yield 'function' => ['<?php function f() {}'];
        yield 'function by reference' => ['<?php function &f() { static $a; return $a; }'];
        yield 'conditional function' => ['<?php if (!function_exists("f")) { function f() {} }'];
        yield 'class' => ['<?php final class A {}'];
        yield 'interface' => ['<?php interface I {}'];
        yield 'trait' => ['<?php trait T {}'];
        yield 'enum' => ['<?php enum E { case A; }'];
        yield 'const' => ['<?php const X = 1;'];
        yield 'define' => ['<?php define("X", 1);'];
        yield 'qualified define' => ['<?php \\define("X", 1);'];
        yield 'class alias' => ['<?php class_alias("A", "B");'];
        yield 'not PHP' => ['<?php function ('];
    }

    /** @return iterable<string, array{string}> */
    public static function pure(): iterable
    {
        yield 'variables' => ['<?php $config = ["a" => 1]; $db = null;'];
        yield 'closures' => ['<?php $f = function () {}; $g = fn() => 1; $h = static function () use ($f) {};'];
        yield 'class names and instances' => ['<?php $n = Foo::class; $o = new class {}; $p = new Foo();'];
        yield 'method named define' => ['<?php $x->define("a"); Foo::define("b"); $y?->class_alias();'];
        yield 'template' => ['<html><?= htmlspecialchars($title) ?></html>'];
        yield 'includes' => ['<?php require_once __DIR__ . "/functions.php"; include "x.php";'];
    }

    /** @return iterable<string, array{string}> declared again by a second run: "Cannot redeclare" */
    public static function unguarded(): iterable
    {
        yield 'function' => ['<?php function f() {}'];
        yield 'function by reference' => ['<?php function &f() { static $a; return $a; }'];
        yield 'class after code' => ['<?php $x = "{$y}"; if ($x) { echo 1; } final class A {}'];
        yield 'abstract class' => ['<?php abstract class A {}'];
        yield 'interface' => ['<?php interface I {}'];
        yield 'trait' => ['<?php trait T {}'];
        yield 'enum' => ['<?php enum E { case A; }'];
        yield 'after a namespace statement' => ['<?php namespace A\\B; function f() {}'];
        yield 'in a braced namespace' => ['<?php namespace A { function f() {} }'];
        yield 'in the global braced namespace' => ['<?php namespace { class A {} }'];
        yield 'in a bare block' => ['<?php echo 1; { function f() {} }'];
        yield 'in a template' => ['<p><?php function f() {} ?></p>'];
        yield 'in a condition that checks something else' => ['<?php if (PHP_VERSION_ID >= 80000) { function f() {} } else { function f() {} }'];
        yield 'in a try' => ['<?php try { function f() {} } finally {}'];
        yield 'in a closure run at once' => ['<?php (function () { function f() {} })();'];
        yield 'in a method of an anonymous class' => ['<?php $o = new class { public function f() { function g() {} } };'];
        yield 'after a guarded one' => ['<?php if (!function_exists("f")) { function f() {} } function g() {}'];
        yield 'a guard written with endif' => ['<?php if (!function_exists("f")): function f() {} endif;'];
        yield 'not PHP' => ['<?php function ('];
    }

    /** @return iterable<string, array{string}> */
    public static function guardedOrNone(): iterable
    {
        yield 'guarded function' => ['<?php if (!function_exists("f")) { function f() {} }'];
        yield 'guarded class' => ['<?php if (!class_exists("A", false)) { final class A { public function m() {} } }'];
        yield 'guard with a qualified call' => ['<?php if (!\\interface_exists("I")) { interface I {} }'];
        yield 'in a braced namespace, guarded' => ['<?php namespace A { if (!function_exists("A\\\\f")) { function f() {} } }'];
        yield 'nested in a guard' => ['<?php if (!function_exists("f")) { if (PHP_VERSION_ID > 1) { function f() {} } else { function f() {} } }'];
        yield 'the else of a guard' => ['<?php if (function_exists("f")) { $g = "f"; } else { function f() {} }'];
        yield 'elseif guard' => ['<?php if ($a) { echo 1; } elseif (!trait_exists("T")) { trait T {} }'];
        yield 'methods of an anonymous class' => ['<?php $o = new class ($a) extends B implements C { public function f() {} };'];
        yield 'a guarded trait with methods' => ['<?php if (!trait_exists("T")) { trait T { abstract function a(); public function b() { return fn() => 1; } } }'];
        yield 'closures' => ['<?php $f = function () {}; $g = static fn() => 1;'];
        yield 'constants' => ['<?php const X = 1; define("Y", 2);'];
        yield 'class names' => ['<?php $n = Foo::class; namespace\\f();'];
        yield 'a string interpolation before a guarded function' => ['<?php echo "{$a}"; if (!function_exists("f")) { function f() {} }'];
    }

    #[DataProvider('unguarded')]
    public function testAnUnguardedDeclarationFailsWhenRunAgain(string $source): void
    {
        self::assertTrue(Declarations::unguarded($source));
    }

    #[DataProvider('guardedOrNone')]
    public function testAGuardedDeclarationOrNoneAtAllRunsAgain(string $source): void
    {
        self::assertFalse(Declarations::unguarded($source));
    }

    public function testAFileIsReadOnceAndItsAnswerFollowsItsEdits(): void
    {
        $file = tempnam(sys_get_temp_dir(), 'kiln-declarations-');
        self::assertIsString($file);
        try {
            file_put_contents($file, '<?php if (!function_exists("kiln_f")) { function kiln_f() {} }');
            self::assertTrue(Declarations::inFile($file));
            self::assertFalse(Declarations::failsWhenRunAgain($file));
            file_put_contents($file, '<?php function kiln_f() {}');
            touch($file, time() + 10); // another modification time, read once the cached answer is 2 s old
            self::assertFalse(Declarations::failsWhenRunAgain($file), 'cached for 2 s, as opcache trusts a file');
        } finally {
            unlink($file);
        }
        self::assertTrue(Declarations::failsWhenRunAgain($file . '.gone'), 'unreadable: assume the worst');
    }

    #[DataProvider('declaring')]
    public function testAFileThatDeclaresSomethingIsRecognised(string $source): void
    {
        self::assertTrue(Declarations::inSource($source));
    }

    #[DataProvider('pure')]
    public function testAFileThatDeclaresNothingIsPure(string $source): void
    {
        self::assertFalse(Declarations::inSource($source));
    }
}
