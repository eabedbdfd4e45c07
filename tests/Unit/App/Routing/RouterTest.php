<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\App\Routing;

use Kiln\App\Routing\MatchStatus;
use Kiln\App\Routing\RouteCollector;
use Kiln\App\Routing\Router;
use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;

final class RouterTest extends TestCase
{
    private static function router(): Router
    {
        $r = new RouteCollector();
        $r->get('/', 'home');
        $r->get('/users/{id:\d+}', 'user.show');
        $r->get('/users/{name}', 'user.byName');        // registered after {id:\d+}: loses on digits
        $r->get('/users/me', 'user.me');                // static: beats both dynamic routes
        $r->post('/users', 'user.create');
        $r->get('/users', 'user.list');
        $r->put('/users/{id:\d+}', 'user.update');
        $r->delete('/users/{id:\d+}', 'user.delete');
        $r->get('/blog[/{page:\d+}[/{sort:asc|desc}]]', 'blog')->defaults(['page' => 1, 'sort' => 'desc']);
        $r->get('/archive/{year:\d{4}}/{month:\d{1,2}}', 'archive');
        $r->get('/lang/{lang:(en|de)}', 'lang');
        $r->get('/files/{path:.+}', 'file');
        $r->route(['HEAD'], '/ping', 'ping.head');
        $r->get('/ping', 'ping.get');
        $r->options('/cors', 'cors.options');
        $r->get('/cors', 'cors.get');
        $r->any('/hook/{name}', 'hook');
        $r->get('/hook/github', 'hook.github');          // static beats the earlier any() dynamic route
        $r->get('/{slug}', 'page');                      // catch-all registered last: only what is left
        $r->get('/v{version:\d+}/items', 'items');
        return new Router($r);
    }

    /**
     * @return iterable<string, array{string, string, ?string, array<string, string>, bool}>
     */
    public static function found(): iterable
    {
        yield 'root' => ['GET', '/', 'home', [], false];
        yield 'static beats dynamic' => ['GET', '/users/me', 'user.me', [], false];
        yield 'first registered dynamic wins' => ['GET', '/users/42', 'user.show', ['id' => '42'], false];
        yield 'constraint sends the rest on' => ['GET', '/users/bob', 'user.byName', ['name' => 'bob'], false];
        yield 'static list' => ['GET', '/users', 'user.list', [], false];
        yield 'post' => ['POST', '/users', 'user.create', [], false];
        yield 'put' => ['PUT', '/users/7', 'user.update', ['id' => '7'], false];
        yield 'optional absent: defaults' => ['GET', '/blog', 'blog', ['page' => '1', 'sort' => 'desc'], false];
        yield 'optional present' => ['GET', '/blog/3', 'blog', ['page' => '3', 'sort' => 'desc'], false];
        yield 'nested optional present' => ['GET', '/blog/3/asc', 'blog', ['page' => '3', 'sort' => 'asc'], false];
        yield 'regex with braces' => ['GET', '/archive/2024/5', 'archive', ['year' => '2024', 'month' => '5'], false];
        yield 'user group made non-capturing' => ['GET', '/lang/de', 'lang', ['lang' => 'de'], false];
        yield 'param spanning slashes' => ['GET', '/files/a/b/c.txt', 'file', ['path' => 'a/b/c.txt'], false];
        yield 'encoded param decoded' => ['GET', '/users/J%C3%BCrgen%20K%2F', 'user.byName', ['name' => 'Jürgen K/'], false];
        yield 'plus stays a plus' => ['GET', '/users/a+b', 'user.byName', ['name' => 'a+b'], false];
        yield 'HEAD falls back to GET' => ['HEAD', '/users/42', 'user.show', ['id' => '42'], true];
        yield 'HEAD falls back to static GET' => ['HEAD', '/users', 'user.list', [], true];
        yield 'explicit HEAD wins over GET' => ['HEAD', '/ping', 'ping.head', [], false];
        yield 'explicit OPTIONS route' => ['OPTIONS', '/cors', 'cors.options', [], false];
        yield 'any() matches every method' => ['PATCH', '/hook/x', 'hook', ['name' => 'x'], false];
        yield 'any() matches unknown methods' => ['PURGE', '/hook/x', 'hook', ['name' => 'x'], false];
        yield 'any() serves HEAD itself' => ['HEAD', '/hook/x', 'hook', ['name' => 'x'], false];
        yield 'static GET beats any() dynamic' => ['GET', '/hook/github', 'hook.github', [], false];
        yield 'any() still answers POST there' => ['POST', '/hook/github', 'hook', ['name' => 'github'], false];
        yield 'catch-all' => ['GET', '/about', 'page', ['slug' => 'about'], false];
        yield 'literal then param in one segment' => ['GET', '/v2/items', 'items', ['version' => '2'], false];
    }

    /** @param array<string, string> $params */
    #[DataProvider('found')]
    public function testARequestIsRoutedToTheRightHandler(string $method, string $path, string $handler, array $params, bool $headFallback): void
    {
        $match = self::router()->match($method, $path);
        self::assertSame(MatchStatus::FOUND, $match->status, "$method $path");
        self::assertSame($handler, $match->route?->handler);
        self::assertSame($params, $match->params);
        self::assertSame($headFallback, $match->headFallback);
        self::assertSame([], $match->allowed);
    }

    public function testRepeatedMatchesOfAStaticRouteKeepGetAndHeadApart(): void
    {
        $router = self::router();
        foreach ([1, 2] as $round) {
            $get = $router->match('GET', '/users');
            $head = $router->match('HEAD', '/users');
            self::assertSame(['user.list', false], [$get->route?->handler, $get->headFallback], "round $round");
            self::assertSame(['user.list', true], [$head->route?->handler, $head->headFallback], "round $round");
        }
    }

    public function testARouteAddedAfterAMatchIsFound(): void
    {
        $routes = new RouteCollector();
        $routes->get('/a', 'first');
        $router = new Router($routes);
        self::assertSame('first', $router->match('GET', '/a')->route?->handler);
        $routes->get('/b', 'second');
        self::assertSame('second', $router->match('GET', '/b')->route?->handler);
        self::assertSame('first', $router->match('GET', '/a')->route?->handler);
    }

    /** @return iterable<string, array{string, string, MatchStatus, list<string>}> */
    public static function notFound(): iterable
    {
        yield 'nothing there' => ['GET', '/users/42/posts', MatchStatus::NOT_FOUND, []];
        yield 'constraint refuses' => ['GET', '/blog/x', MatchStatus::NOT_FOUND, []];
        yield 'nested optional needs its parent' => ['GET', '/blog//asc', MatchStatus::NOT_FOUND, []];
        yield 'regex anchored' => ['GET', '/archive/20245/1', MatchStatus::NOT_FOUND, []];
        yield 'no partial match' => ['GET', '/lang/english', MatchStatus::NOT_FOUND, []];
        yield 'paths are case-sensitive' => ['GET', '/USERS/me/x', MatchStatus::NOT_FOUND, []];
        yield 'DELETE on a GET/POST path' => ['DELETE', '/users', MatchStatus::METHOD_NOT_ALLOWED, ['GET', 'HEAD', 'POST', 'OPTIONS']];
        yield 'POST on a dynamic path' => ['POST', '/users/42', MatchStatus::METHOD_NOT_ALLOWED, ['GET', 'HEAD', 'PUT', 'DELETE', 'OPTIONS']];
        yield 'OPTIONS without route: automatic' => ['OPTIONS', '/users/42', MatchStatus::AUTO_OPTIONS, ['GET', 'HEAD', 'PUT', 'DELETE', 'OPTIONS']];
        yield 'OPTIONS on a HEAD-only and GET path' => ['OPTIONS', '/ping', MatchStatus::AUTO_OPTIONS, ['GET', 'HEAD', 'OPTIONS']];
        yield 'POST where the catch-all is GET' => ['POST', '/contact', MatchStatus::METHOD_NOT_ALLOWED, ['GET', 'HEAD', 'OPTIONS']];
        yield 'unknown method' => ['PURGE', '/users', MatchStatus::METHOD_NOT_ALLOWED, ['GET', 'HEAD', 'POST', 'OPTIONS']];
        yield 'methods are case-sensitive' => ['get', '/users', MatchStatus::METHOD_NOT_ALLOWED, ['GET', 'HEAD', 'POST', 'OPTIONS']];
        yield 'not a path' => ['OPTIONS', '*', MatchStatus::NOT_FOUND, []];
        yield 'empty path' => ['GET', '', MatchStatus::NOT_FOUND, []];
    }

    /** @param list<string> $allowed */
    #[DataProvider('notFound')]
    public function testAPathWithoutARouteForTheMethodSaysWhatIsAllowed(string $method, string $path, MatchStatus $status, array $allowed): void
    {
        $match = self::router()->match($method, $path);
        self::assertSame($status, $match->status, "$method $path");
        self::assertNull($match->route);
        self::assertSame($allowed, $match->allowed);
    }

    public function testTheAllowHeaderListsTheMethods(): void
    {
        self::assertSame('GET, HEAD, POST, OPTIONS', self::router()->match('DELETE', '/users')->allowHeader());
    }

    public function testAnAnyRouteAllowsTheCommonMethods(): void
    {
        self::assertSame(
            ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'],
            self::router()->allowedMethods('/hook/x'),
        );
    }

    public function testRoutesAddedAfterTheFirstMatchAreSeen(): void
    {
        $routes = new RouteCollector();
        $routes->get('/a', 'a');
        $router = new Router($routes);
        self::assertSame(MatchStatus::NOT_FOUND, $router->match('GET', '/b/1')->status);
        $routes->get('/b/{id}', 'b');
        self::assertSame('b', $router->match('GET', '/b/1')->route?->handler);
    }

    public function testManyRoutesAcrossChunksKeepRegistrationOrder(): void
    {
        $routes = new RouteCollector();
        for ($i = 0; $i < 300; $i++) {
            $routes->get("/r$i/{id:\\d+}", "r$i");
            $routes->get("/{x}/n$i/{id}", "n$i");
        }
        $routes->get('/{a}/{b}/{c}', 'last');
        $router = new Router($routes);
        self::assertSame('r0', $router->match('GET', '/r0/1')->route?->handler);
        self::assertSame('r299', $router->match('GET', '/r299/1')->route?->handler);
        self::assertSame(['x' => 'r299', 'id' => 'y'], $router->match('GET', '/r299/n150/y')->params);
        self::assertSame('n150', $router->match('GET', '/r299/n150/y')->route?->handler);
        self::assertSame('last', $router->match('GET', '/q/w/e')->route?->handler);
        self::assertSame(MatchStatus::NOT_FOUND, $router->match('GET', '/r1/x')->status);
    }

    public function testLiteralTextOutsideThePathAlphabetIsMatchedPercentEncoded(): void
    {
        $routes = new RouteCollector();
        $routes->get('/café/{x}', 'cafe');
        $routes->get('/a b', 'space');
        $router = new Router($routes);
        self::assertSame('cafe', $router->match('GET', '/caf%C3%A9/1')->route?->handler);
        self::assertSame('space', $router->match('GET', '/a%20b')->route?->handler);
    }

    public function testAParamMayBeEmptyWhenItsRegexSaysSo(): void
    {
        $routes = new RouteCollector();
        $routes->get('/t[/{tail:.*}]', 't')->defaults(['tail' => 'none']);
        $router = new Router($routes);
        self::assertSame(['tail' => ''], $router->match('GET', '/t/')->params);
        self::assertSame(['tail' => 'none'], $router->match('GET', '/t')->params);
    }

    /** @return iterable<string, array{string, ?string}> */
    public static function depths(): iterable
    {
        yield 'shallow catch-all registered first' => ['/api/x', 'shallow'];
        yield 'deeper route where the shallow one cannot match' => ['/api/v1/x', 'deeper'];
        yield 'an earlier route beats a literal one' => ['/api/v1/users', 'deeper'];
        yield 'the optional part present' => ['/api/v1/users/5', 'users'];
        yield 'trailing slash is not the optional part' => ['/api/v1/users/', null];
        yield 'a prefix of a deeper route' => ['/api/v1', 'shallow'];
        yield 'mid-segment literal' => ['/api/v1/users.json', 'deeper'];
        yield 'format suffix' => ['/api/v2/users.json', 'format'];
    }

    #[DataProvider('depths')]
    public function testRegistrationOrderHoldsAcrossPrefixDepths(string $path, ?string $handler): void
    {
        $routes = new RouteCollector();
        $routes->get('/{a}/{b}', 'shallow');
        $routes->get('/api/{b}', 'deep');
        $routes->get('/api/v1/{c}', 'deeper');
        $routes->get('/api/v1/users[/{id}]', 'users');
        $routes->get('/api/v2/users.{format}', 'format');
        self::assertSame($handler, (new Router($routes))->match('GET', $path)->route?->handler, $path);
    }

    public function testAChunkTooLargeForPcreIsSplit(): void
    {
        $routes = new RouteCollector();
        for ($i = 0; $i < 8; $i++) {
            $routes->get("/{t}/big$i/{v:(?:[a-z]\\d){1,1000}}", "big$i");
        }
        $router = new Router($routes);
        self::assertSame('big0', $router->match('GET', '/t/big0/a1')->route?->handler);
        self::assertSame('big7', $router->match('GET', '/t/big7/a1b2')->route?->handler);
    }
}
