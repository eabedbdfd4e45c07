<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Site\Sequential;

use Kiln\Site\Sequential\Superglobals;
use Kiln\Tests\Unit\App\Middleware\Requests;
use PHPUnit\Framework\TestCase;

final class SuperglobalsTest extends TestCase
{
    protected function tearDown(): void
    {
        Superglobals::clear();
    }

    public function testGetIsTheRequestsQueryWhenQueryStringIsTheRequestsOwn(): void
    {
        Superglobals::install(['QUERY_STRING' => 'a=1&b[]=2'], Requests::make('GET', '/x?a=1&b[]=2'));
        self::assertSame(['a' => '1', 'b' => ['2']], $_GET);
        self::assertSame($_GET, $_REQUEST);
    }

    public function testGetFollowsAQueryStringAnHtaccessRewriteChanged(): void
    {
        Superglobals::install(['QUERY_STRING' => 'id=3&x=a+b'], Requests::make('GET', '/item/3?x=a+b'));
        self::assertSame(['id' => '3', 'x' => 'a b'], $_GET);
        self::assertSame('id=3&x=a+b', $_SERVER['QUERY_STRING']);
    }
}
