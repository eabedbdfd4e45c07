<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\App\Routing;

use Kiln\App\Routing\MatchStatus;
use Kiln\App\Routing\RouteCollector;
use Kiln\App\Routing\Router;
use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;

final class UrlGenerationTest extends TestCase
{
    private static function router(): Router
    {
        $r = new RouteCollector();
        $r->get('/', 'h')->name('home');
        $r->get('/users/{id:\d+}', 'h')->name('user');
        $r->get('/users/{name}/posts/{slug}', 'h')->name('post');
        $r->get('/blog[/{page:\d+}[/{sort:asc|desc}]]', 'h')->name('blog')->defaults(['page' => '1']);
        $r->get('/t[/{a}[/{b}]]', 'h')->name('nodefault');
        $r->get('/files/{path:.+}', 'h')->name('file');
        $r->group('/admin', static function (RouteCollector $admin): void {
            $admin->get('/stats/{year:\d{4}}', 'h')->name('admin.stats');
        });
        return new Router($r);
    }

    /**
     * @return iterable<string, array{string, array<string, string|int|float|\Stringable|null>, array<array-key, mixed>, string}>
     */
    public static function urls(): iterable
    {
        yield 'static' => ['home', [], [], '/'];
        yield 'int param' => ['user', ['id' => 5], [], '/users/5'];
        yield 'string params' => ['post', ['name' => 'bob', 'slug' => 'hi'], [], '/users/bob/posts/hi'];
        yield 'values are rawurlencoded' => ['post', ['name' => 'Jürgen K', 'slug' => 'a/b?c#d'], [], '/users/J%C3%BCrgen%20K/posts/a%2Fb%3Fc%23d'];
        yield 'optional omitted' => ['blog', [], [], '/blog'];
        yield 'optional given' => ['blog', ['page' => 2], [], '/blog/2'];
        yield 'null means omitted' => ['blog', ['page' => null], [], '/blog'];
        yield 'nested optional pulls its parent from defaults' => ['blog', ['sort' => 'asc'], [], '/blog/1/asc'];
        yield 'both given' => ['blog', ['page' => 3, 'sort' => 'desc'], [], '/blog/3/desc'];
        yield 'query string' => ['user', ['id' => 5], ['q' => 'a b', 'tags' => ['x', 'y']], '/users/5?q=a%20b&tags%5B0%5D=x&tags%5B1%5D=y'];
        yield 'empty query adds nothing' => ['user', ['id' => 5], ['skip' => null], '/users/5'];
        yield 'group prefix included' => ['admin.stats', ['year' => 2024], [], '/admin/stats/2024'];
        yield 'stringable value' => ['post', ['name' => new class implements \Stringable {
            public function __toString(): string
            {
                return 'ann';
            }
        }, 'slug' => 'x'], [], '/users/ann/posts/x'];
    }

    /**
     * @param array<string, string|int|float|\Stringable|null> $params
     * @param array<array-key, mixed> $query
     */
    #[DataProvider('urls')]
    public function testANamedRouteGivesItsUrl(string $name, array $params, array $query, string $url): void
    {
        self::assertSame($url, self::router()->url($name, $params, $query));
    }

    public function testAGeneratedUrlRoutesBackToTheSameParams(): void
    {
        $router = self::router();
        $url = $router->url('post', ['name' => 'Jürgen K', 'slug' => 'a/b']);
        $match = $router->match('GET', $url);
        self::assertSame(MatchStatus::FOUND, $match->status);
        self::assertSame(['name' => 'Jürgen K', 'slug' => 'a/b'], $match->params);
    }

    /** @return iterable<string, array{string, array<string, mixed>, string}> */
    public static function bad(): iterable
    {
        yield 'unknown name' => ['nope', [], "No route is named 'nope'"];
        yield 'missing param' => ['user', [], "needs parameter 'id'"];
        yield 'value does not fit the regex' => ['user', ['id' => 'abc'], "'abc' does not fit parameter 'id'"];
        yield 'negative number' => ['user', ['id' => -1], "'-1' does not fit"];
        yield 'year too long' => ['admin.stats', ['year' => 20245], 'does not fit'];
        yield 'enum value refused' => ['blog', ['sort' => 'up'], "'up' does not fit parameter 'sort'"];
        yield 'unknown param' => ['user', ['id' => 1, 'page' => 2], "has no parameter 'page'"];
        yield 'nested optional without parent or default' => ['nodefault', ['b' => 'x'], "needs parameter 'a'"];
        yield 'empty value' => ['user', ['id' => ''], 'does not fit'];
        yield 'bool value' => ['user', ['id' => true], 'must be a string'];
        yield 'array value' => ['user', ['id' => [1]], 'must be a string'];
    }

    /** @param array<string, mixed> $params */
    #[DataProvider('bad')]
    public function testABadUrlRequestIsAValueError(string $name, array $params, string $message): void
    {
        $this->expectException(\ValueError::class);
        $this->expectExceptionMessage($message);
        // @phpstan-ignore argument.type (wrong types on purpose)
        self::router()->url($name, $params);
    }

    public function testAnEncodedSlashFitsAWholePathParam(): void
    {
        self::assertSame('/files/docs%2Fintro.md', self::router()->url('file', ['path' => 'docs/intro.md']));
    }
}
