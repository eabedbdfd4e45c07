<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\App\Routing;

use Kiln\App\Middleware;
use Kiln\App\Routing\Route;
use Kiln\App\Routing\RouteCollector;
use Kiln\App\Routing\Router;
use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;

final class RouteCollectorTest extends TestCase
{
    /** @return list<string> */
    private static function tags(Route $route): array
    {
        return array_map(static fn(Middleware $m): string => $m instanceof TagMiddleware ? $m->tag : '?', $route->middleware);
    }

    public function testGroupsConcatenatePrefixesAndMiddlewareOuterFirst(): void
    {
        $routes = new RouteCollector();
        $inner = null;
        $routes->group('/admin', static function (RouteCollector $admin) use (&$inner): void {
            $admin->get('', 'admin.home');
            $admin->group('/users/', static function (RouteCollector $users) use (&$inner): void {
                $inner = $users->get('/{id}', 'admin.user')->middleware(new TagMiddleware('route1'), new TagMiddleware('route2'));
            }, [new TagMiddleware('users')]);
        }, [new TagMiddleware('admin'), new TagMiddleware('audit')]);
        $outside = $routes->get('/after', 'after');

        self::assertInstanceOf(Route::class, $inner);
        self::assertSame('/admin/users/{id}', $inner->pattern);
        self::assertSame(['admin', 'audit', 'users', 'route1', 'route2'], self::tags($inner));
        self::assertSame([], $outside->middleware, 'group state does not leak past the group');
        self::assertSame(['/admin', '/admin/users/{id}', '/after'], array_map(static fn(Route $r): string => $r->pattern, $routes->routes()));

        $match = (new Router($routes))->match('GET', '/admin/users/7');
        self::assertSame('admin.user', $match->route?->handler);
        self::assertSame(['id' => '7'], $match->params);
    }

    public function testAGroupIsClosedEvenWhenItsDefinitionThrows(): void
    {
        $routes = new RouteCollector();
        try {
            $routes->group('/g', static function (): void {
                throw new \RuntimeException('boom');
            }, [new TagMiddleware('g')]);
            self::fail('the exception reaches the caller');
        } catch (\RuntimeException $e) { // fail()'s AssertionFailedError is one too: the message tells them apart
            self::assertSame('boom', $e->getMessage());
        }
        $route = $routes->get('/x', 'x');
        self::assertSame('/x', $route->pattern);
        self::assertSame([], $route->middleware);
    }

    public function testAGroupPrefixMayHoldParameters(): void
    {
        $routes = new RouteCollector();
        $routes->group('/{lang:en|de}', static function (RouteCollector $r): void {
            $r->get('/docs/{page}', 'docs');
        });
        self::assertSame(['lang' => 'de', 'page' => 'intro'], (new Router($routes))->match('GET', '/de/docs/intro')->params);
    }

    public function testMethodsAreUpperCasedAndAnyIsAStar(): void
    {
        $routes = new RouteCollector();
        self::assertSame(['GET', 'POST'], $routes->route(['get', 'Post'], '/x', 'h')->methods);
        self::assertSame([Route::ANY], $routes->any('/y', 'h')->methods);
        self::assertTrue($routes->any('/z', 'h')->isAny());
    }

    public function testDefaultsAreKeptAsStrings(): void
    {
        $route = (new RouteCollector())->get('/p[/{n:\d+}]', 'h')->defaults(['n' => 1, 'ratio' => 0.5]);
        self::assertSame(['n' => '1', 'ratio' => '0.5'], $route->defaults);
    }

    /** @return iterable<string, array{string, string}> */
    public static function badPatterns(): iterable
    {
        yield 'no leading slash' => ['users', "must start with '/'"];
        yield 'optional in the middle' => ['/a[/{b}]/c', 'only come at the end'];
        yield 'two optional parts side by side' => ['/a[/{b}][/{c}]', 'only come at the end'];
        yield 'optional in the middle of an optional' => ['/a[/{b}[/{c}]/d]', 'only come at the end'];
        yield 'unclosed bracket' => ['/a[/{b}', "unclosed '['"];
        yield 'stray closing bracket' => ['/a]', "unbalanced ']'"];
        yield 'empty optional' => ['/a[]', 'empty optional'];
        yield 'unclosed brace' => ['/a/{id', 'needs a name'];
        yield 'unclosed regex brace' => ['/a/{id:\d{2}', "unbalanced '{'"];
        yield 'stray closing brace' => ['/a/}', "unbalanced '}'"];
        yield 'bad name' => ['/a/{1d}', 'needs a name'];
        yield 'empty regex' => ['/a/{id:}', 'empty regex'];
        yield 'duplicate name' => ['/a/{id}/b/{id}', "'id' appears twice"];
        yield 'duplicate name in optional' => ['/a/{id}[/{id}]', "'id' appears twice"];
        yield 'named group' => ['/a/{id:(?<n>\d+)}', 'named groups'];
        yield 'python named group' => ['/a/{id:(?P<n>\d+)}', 'named groups'];
        yield 'branch reset' => ['/a/{id:(?|a|b)}', 'branch resets'];
        yield 'backreference' => ['/a/{id:(a)\1}', 'backreferences'];
        yield 'verb' => ['/a/{id:(*MARK:x)a}', 'verbs'];
        yield 'recursion' => ['/a/{id:a(?R)?}', 'recursion'];
        yield 'invalid regex' => ['/a/{id:*a}', 'invalid regex'];
        yield 'brace inside a class is not the end' => ['/a/{id:[a-}', "unbalanced '{'"];
    }

    #[DataProvider('badPatterns')]
    public function testABadPatternIsRejectedAtRegistrationNamingTheRoute(string $pattern, string $message): void
    {
        try {
            (new RouteCollector())->get($pattern, 'h');
            self::fail("accepted $pattern");
        } catch (\ValueError $e) {
            self::assertStringContainsString($message, $e->getMessage());
            self::assertStringContainsString($pattern, $e->getMessage());
        }
    }

    /** @return iterable<string, array{string, string, array<string, string>}> */
    public static function trickyButValid(): iterable
    {
        yield 'char class with a brace' => ['/a/{x:[^}/]+}', '/a/b{c', ['x' => 'b{c']];
        yield 'char class with a bracket first' => ['/a/{x:[]a]+}', '/a/a]a', ['x' => 'a]a']];
        yield 'escaped brace' => ['/a/{x:\{\d+\}}', '/a/{12}', ['x' => '{12}']];
        yield 'tilde (the delimiter)' => ['/a/{x:~\w+}', '/a/~bob', ['x' => '~bob']];
        yield 'lookahead kept' => ['/a/{x:(?!admin)\w+}', '/a/bob', ['x' => 'bob']];
        yield 'inline flag' => ['/a/{x:(?i)abc}', '/a/ABC', ['x' => 'ABC']];
        yield 'capture group in an optional part' => ['/a[/{x:(b|c)+}[/{y}]]', '/a/bc/z', ['x' => 'bc', 'y' => 'z']];
    }

    /** @param array<string, string> $params */
    #[DataProvider('trickyButValid')]
    public function testRegexesWithBracesClassesAndGroupsWork(string $pattern, string $path, array $params): void
    {
        $routes = new RouteCollector();
        $routes->get($pattern, 'h');
        self::assertSame($params, (new Router($routes))->match('GET', $path)->params);
    }

    public function testTheSameMethodAndPatternTwiceIsRejected(): void
    {
        $routes = new RouteCollector();
        $routes->route(['GET', 'POST'], '/x', 'a');
        $routes->any('/x', 'anything else is fine');
        $this->expectExceptionMessage('registered twice');
        $routes->post('/x', 'b');
    }

    /** @return iterable<string, array{\Closure(RouteCollector): mixed, string}> */
    public static function misuse(): iterable
    {
        yield 'no method' => [static fn(RouteCollector $r) => $r->route([], '/x', 'h'), 'at least one method'];
        yield 'not a method' => [static fn(RouteCollector $r) => $r->route(['GE T'], '/x', 'h'), 'not an HTTP method'];
        yield 'any with others' => [static fn(RouteCollector $r) => $r->route(['*', 'GET'], '/x', 'h'), 'cannot be combined'];
        yield 'empty path outside a group' => [static fn(RouteCollector $r) => $r->get('', 'h'), "must start with '/'"];
        yield 'relative path in a group' => [static fn(RouteCollector $r) => $r->group('/g', static function (RouteCollector $g): void {
            $g->get('x', 'h');
        }), "must start with '/'"];
        yield 'bad group prefix' => [static fn(RouteCollector $r) => $r->group('g', static function (): void {}), "must start with '/'"];
        // @phpstan-ignore argument.type (wrong type on purpose)
        yield 'group middleware of the wrong type' => [static fn(RouteCollector $r) => $r->group('/g', static function (): void {}, ['nope']), 'must implement'];
        // @phpstan-ignore argument.type (wrong type on purpose)
        yield 'default of the wrong type' => [static fn(RouteCollector $r) => $r->get('/x', 'h')->defaults(['a' => []]), 'must be a string'];
        yield 'duplicate name' => [static function (RouteCollector $r): void {
            $r->get('/a', 'h')->name('n');
            $r->get('/b', 'h')->name('n');
        }, "'n' is already used by GET /a"];
        yield 'renaming' => [static fn(RouteCollector $r) => $r->get('/a', 'h')->name('a')->name('b'), 'already named'];
    }

    /** @param \Closure(RouteCollector): mixed $misuse */
    #[DataProvider('misuse')]
    public function testMisuseIsAValueErrorThatSaysWhatToDo(\Closure $misuse, string $message): void
    {
        $this->expectException(\ValueError::class);
        $this->expectExceptionMessage($message);
        $misuse(new RouteCollector());
    }
}
