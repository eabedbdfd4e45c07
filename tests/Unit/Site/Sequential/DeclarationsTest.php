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
