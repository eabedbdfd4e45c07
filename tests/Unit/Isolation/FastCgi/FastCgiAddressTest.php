<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Isolation\FastCgi;

use Kiln\Isolation\FastCgi\FastCgiAddress;
use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;

final class FastCgiAddressTest extends TestCase
{
    /** @return iterable<string, array{string, ?string, int, ?string, string, string}> */
    public static function valid(): iterable
    {
        yield 'IPv4' => ['127.0.0.1:9000', '127.0.0.1', 9000, null, 'tcp://127.0.0.1:9000', '127.0.0.1:9000'];
        yield 'host name' => ['php-fpm.internal:9001', 'php-fpm.internal', 9001, null, 'tcp://php-fpm.internal:9001', 'php-fpm.internal:9001'];
        yield 'IPv6' => ['[::1]:9000', '::1', 9000, null, 'tcp://[::1]:9000', '[::1]:9000'];
        yield 'IPv6 full' => ['[2001:db8::a:1]:65535', '2001:db8::a:1', 65535, null, 'tcp://[2001:db8::a:1]:65535', '[2001:db8::a:1]:65535'];
        yield 'unix socket' => ['unix:/run/php/php8.2-fpm.sock', null, 0, '/run/php/php8.2-fpm.sock', 'unix:///run/php/php8.2-fpm.sock', 'unix:/run/php/php8.2-fpm.sock'];
        yield 'unix socket, URL form' => ['unix:///tmp/a.sock', null, 0, '/tmp/a.sock', 'unix:///tmp/a.sock', 'unix:/tmp/a.sock'];
        yield 'unix socket, relative' => ['unix:var/fpm.sock', null, 0, 'var/fpm.sock', 'unix://var/fpm.sock', 'unix:var/fpm.sock'];
    }

    #[DataProvider('valid')]
    public function testAddressIsParsedIntoItsParts(string $text, ?string $host, int $port, ?string $path, string $uri, string $canonical): void
    {
        $address = FastCgiAddress::parse($text);
        self::assertSame([$host, $port, $path, $path !== null], [$address->host, $address->port, $address->path, $address->isUnix()]);
        self::assertSame($uri, $address->uri());
        self::assertSame($canonical, (string) $address);
        self::assertEquals($address, FastCgiAddress::parse($address->toString()));
    }

    /** @return iterable<string, array{string}> */
    public static function invalid(): iterable
    {
        yield 'empty' => [''];
        yield 'no port' => ['127.0.0.1'];
        yield 'empty port' => ['127.0.0.1:'];
        yield 'port 0' => ['127.0.0.1:0'];
        yield 'port too large' => ['127.0.0.1:65536'];
        yield 'six-digit port' => ['127.0.0.1:900000'];
        yield 'bare port' => ['9000'];
        yield 'IPv6 without brackets' => ['::1:9000'];
        yield 'brackets around a name' => ['[localhost]:9000'];
        yield 'bad IPv6' => ['[1:2:3:4:5:6:7:8:9]:9000'];
        yield 'scheme' => ['tcp://127.0.0.1:9000'];
        yield 'space' => ['127.0.0.1 :9000'];
        yield 'path after the port' => ['127.0.0.1:9000/x'];
        yield 'empty unix path' => ['unix:'];
        yield 'empty unix URL path' => ['unix://'];
        yield 'NUL in the unix path' => ["unix:/tmp/a\0b"];
    }

    #[DataProvider('invalid')]
    public function testMalformedAddressIsRefusedWithTheAcceptedForms(string $text): void
    {
        try {
            FastCgiAddress::parse($text);
            self::fail("\"{$text}\" must be refused");
        } catch (\ValueError $e) {
            self::assertStringContainsString('Invalid FastCGI address', $e->getMessage());
        }
    }
}
