<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Http\Static;

use Kiln\Http\Static\PathGuard;
use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;

final class PathGuardTest extends TestCase
{
    /** @return iterable<string, array{?string, string}> decoded (null: 400), raw */
    public static function paths(): iterable
    {
        yield 'plain' => ['/a/b.txt', '/a/b.txt'];
        yield 'root' => ['/', '/'];
        yield 'decoded once' => ['/a b/%41.txt', '/a%20b/%2541.txt'];
        yield 'utf-8' => ['/é.txt', '/%C3%A9.txt'];
        yield 'dots inside names are fine' => ['/a..b/c.d', '/a..b/c.d'];
        yield 'double slash kept' => ['//a//b', '//a//b'];
        yield 'encoded slash' => [null, '/a%2Fb'];
        yield 'encoded slash, lower case' => [null, '/a%2fb'];
        yield 'encoded backslash' => [null, '/a%5cb'];
        yield 'encoded NUL' => [null, '/a%00.txt'];
        yield 'raw backslash' => [null, '/a\\b'];
        yield 'dot-dot' => [null, '/../etc/passwd'];
        yield 'dot-dot inside' => [null, '/a/../b'];
        yield 'dot-dot at the end' => [null, '/a/..'];
        yield 'encoded dot-dot' => [null, '/%2e%2e/x'];
        yield 'half-encoded dot-dot' => [null, '/.%2e/x'];
        yield 'dot segment' => [null, '/a/./b'];
        yield 'dot at the end' => [null, '/a/.'];
        yield 'double-encoded dot-dot is a literal name' => ['/%2e%2e/x', '/%252e%252e/x'];
        yield 'asterisk form' => [null, '*'];
        yield 'empty' => [null, ''];
        yield 'relative' => [null, 'a/b'];
    }

    #[DataProvider('paths')]
    public function testPathsAreDecodedOnceAndDangerousOnesRefused(?string $expected, string $raw): void
    {
        self::assertSame($expected, PathGuard::decode($raw));
    }

    public function testDotfilesAreHiddenButWellKnown(): void
    {
        self::assertTrue(PathGuard::isHidden('/.env'));
        self::assertTrue(PathGuard::isHidden('/.git/config'));
        self::assertTrue(PathGuard::isHidden('/a/.htaccess'));
        self::assertTrue(PathGuard::isHidden('.env'));
        self::assertTrue(PathGuard::isHidden('/.well-known/.secret'));
        self::assertFalse(PathGuard::isHidden('/.well-known/acme-challenge/x'));
        self::assertFalse(PathGuard::isHidden('/a.b/c'));
        self::assertFalse(PathGuard::isHidden('/'));
    }

    /** @return iterable<string, array{bool, string}> */
    public static function sources(): iterable
    {
        foreach (['x.php', 'X.PHP', 'x.php5', 'x.php8', 'x.phtml', 'x.phps', 'x.phar', 'x.inc', 'x.pht', 'x.phpt',
            'x.php~', 'x.php.bak', 'x.php.orig', 'x.php.old', 'x.php.save', 'x.php.swp', 'x.php.1', 'x.inc.bak',
            '#x.php#', 'x.php.bak~', 'x.php.dist'] as $name) {
            yield $name => [true, "/a/$name"];
        }
        foreach (['x.txt', 'x.php.txt', 'x.phpx', 'php', 'x.html', 'x.incx', 'x.js'] as $name) {
            yield $name => [false, "/a/$name"];
        }
    }

    #[DataProvider('sources')]
    public function testPhpSourcesAndTheirBackupsAreRecognised(bool $source, string $path): void
    {
        self::assertSame($source, PathGuard::isSource($path));
    }
}
