<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\App\Routing;

use Kiln\App\Routing\MatchStatus;
use Kiln\App\Routing\RouteCollector;
use Kiln\App\Routing\Router;
use PHPUnit\Framework\TestCase;

/** The Router's cache of static-route matches (Internal\StaticMatches), which the App's dispatcher reads first. */
final class StaticMatchCacheTest extends TestCase
{
    public function testARepeatedStaticMatchIsTheSameObjectWithTheRouteDefaults(): void
    {
        $routes = new RouteCollector();
        $routes->get('/about', 'about')->defaults(['lang' => 'en']);
        $router = new Router($routes);

        $first = $router->match('GET', '/about');
        self::assertSame($first, $router->match('GET', '/about'));
        self::assertSame(['lang' => 'en'], $first->params);
        self::assertSame($first, $router->static->byMethod['GET']['/about'] ?? null);
    }

    public function testAddingARouteEmptiesTheCache(): void
    {
        $routes = new RouteCollector();
        $routes->get('/a', 'a');
        $router = new Router($routes);
        $before = $router->match('GET', '/a');

        $routes->post('/a', 'a.post');

        self::assertSame([], $router->static->byMethod);
        $after = $router->match('GET', '/a');
        self::assertNotSame($before, $after);
        self::assertSame('a', $after->route?->handler);
        self::assertSame('a.post', $router->match('POST', '/a')->route?->handler);
    }

    public function testOnlyMethodsThatRoutesNameAreCachedWhateverMethodsClientsSend(): void
    {
        $routes = new RouteCollector();
        $routes->any('/hook', 'hook');
        $routes->get('/page', 'page');
        $router = new Router($routes);

        foreach (['PURGE', 'X-1', 'X-2', 'GET', 'HEAD'] as $method) {
            self::assertSame(MatchStatus::FOUND, $router->match($method, '/hook')->status, $method);
        }
        self::assertSame('page', $router->match('GET', '/page')->route?->handler);

        self::assertSame(['GET', 'HEAD'], array_keys($router->static->byMethod));
        self::assertSame(['/hook', '/page'], array_keys($router->static->byMethod['GET']));
    }

    public function testMissesAndDynamicMatchesAreNotCached(): void
    {
        $routes = new RouteCollector();
        $routes->get('/users/{id}', 'user');
        $router = new Router($routes);

        self::assertSame(['id' => '7'], $router->match('GET', '/users/7')->params);
        self::assertSame(MatchStatus::NOT_FOUND, $router->match('GET', '/nothing')->status);
        self::assertSame(MatchStatus::METHOD_NOT_ALLOWED, $router->match('POST', '/users/7')->status);

        self::assertSame([], $router->static->byMethod);
    }

    public function testAHeadRequestServedByTheGetRouteIsCachedApartFromTheGet(): void
    {
        $routes = new RouteCollector();
        $routes->get('/x', 'x');
        $router = new Router($routes);

        foreach ([1, 2] as $round) {
            self::assertFalse($router->match('GET', '/x')->headFallback, "round $round");
            self::assertTrue($router->match('HEAD', '/x')->headFallback, "round $round");
        }
    }
}
