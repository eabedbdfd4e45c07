<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\App\Routing;

use Kiln\App\Routing\ApiRoutes;
use Kiln\App\Routing\MatchStatus;
use Kiln\App\Routing\Route;
use Kiln\App\Routing\RouteCollector;
use Kiln\App\Routing\Router;
use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;

final class ApiRoutesTest extends TestCase
{
    private const FIXTURES = __DIR__ . '/../../../Fixtures/api';

    /** @var list<string> */
    private array $cleanup = [];

    protected function tearDown(): void
    {
        foreach (array_reverse($this->cleanup) as $path) {
            is_link($path) || is_file($path) ? unlink($path) : rmdir($path);
        }
    }

    private static function router(string $prefix = '/api'): Router
    {
        $routes = new RouteCollector();
        ApiRoutes::mount($routes, self::FIXTURES, $prefix);
        return new Router($routes);
    }

    /** @return iterable<string, array{string, string, string}> */
    public static function mounted(): iterable
    {
        yield 'index.php is the directory' => ['GET', '/api', 'api.index'];
        yield 'a plain handler answers every method' => ['DELETE', '/api', 'api.index'];
        yield 'nested file' => ['GET', '/api/users/list', 'users.list'];
        yield 'method map, lower-case key upper-cased' => ['GET', '/api/users', 'users.index.get'];
        yield 'method map, POST' => ['POST', '/api/users', 'users.index.post'];
        yield 'HEAD falls back to the map\'s GET' => ['HEAD', '/api/users', 'users.index.get'];
    }

    #[DataProvider('mounted')]
    public function testEachPhpFileIsARoute(string $method, string $path, string $answer): void
    {
        $match = self::router()->match($method, $path);
        self::assertSame(MatchStatus::FOUND, $match->status, "$method $path");
        $handler = $match->route?->handler;
        self::assertInstanceOf(\Closure::class, $handler);
        self::assertSame($answer, $handler());
    }

    public function testAMethodMapAnswersOnlyItsMethods(): void
    {
        $match = self::router()->match('PUT', '/api/users');
        self::assertSame(MatchStatus::METHOD_NOT_ALLOWED, $match->status);
        self::assertSame(['GET', 'HEAD', 'POST', 'OPTIONS'], $match->allowed);
    }

    public function testACallableArrayIsAHandlerNotAMethodMap(): void
    {
        self::assertSame(['ApiStatusFixture', 'show'], self::router()->match('GET', '/api/v1/status')->route?->handler);
    }

    public function testPrivateAndNonPhpFilesAreNotRoutes(): void
    {
        $routes = new RouteCollector();
        ApiRoutes::mount($routes, self::FIXTURES);
        $patterns = array_map(static fn(Route $r): string => $r->pattern, $routes->routes());
        sort($patterns);
        self::assertSame(['/api', '/api/users', '/api/users', '/api/users/list', '/api/v1/status'], $patterns);
        $router = new Router($routes);
        foreach (['/api/users/_helper', '/api/users/.hidden', '/api/users/_private/secret', '/api/README.txt', '/api/users/list.php'] as $path) {
            self::assertSame(MatchStatus::NOT_FOUND, $router->match('GET', $path)->status, $path);
        }
    }

    public function testThePrefixIsConfigurable(): void
    {
        self::assertSame(MatchStatus::FOUND, self::router('')->match('GET', '/')->status);
        self::assertSame(MatchStatus::FOUND, self::router('/v2/')->match('GET', '/v2/users/list')->status);
    }

    public function testFileNamesAreMatchedLiterally(): void
    {
        $dir = $this->tempDir();
        $this->write("$dir/{id}.php", "<?php return 'braces';");
        $this->write("$dir/a b.php", "<?php return 'space';");
        $routes = new RouteCollector();
        ApiRoutes::mount($routes, $dir);
        $router = new Router($routes);
        self::assertSame('braces', $router->match('GET', '/api/%7Bid%7D')->route?->handler);
        self::assertSame(MatchStatus::NOT_FOUND, $router->match('GET', '/api/42')->status);
        self::assertSame('space', $router->match('GET', '/api/a%20b')->route?->handler);
    }

    public function testSymlinksLeavingTheDirectoryAreNotFollowed(): void
    {
        $outside = $this->tempDir();
        $this->write("$outside/secret.php", "<?php return 'outside';");
        $dir = $this->tempDir();
        $this->write("$dir/inside.php", "<?php return 'inside';");
        $this->link($outside, "$dir/escape");
        $this->link("$outside/secret.php", "$dir/leak.php");
        $this->link("$dir/inside.php", "$dir/alias.php");
        $this->link($dir, "$dir/loop");
        $routes = new RouteCollector();
        ApiRoutes::mount($routes, $dir);
        $patterns = array_map(static fn(Route $r): string => $r->pattern, $routes->routes());
        self::assertSame(['/api/alias', '/api/inside'], $patterns);
    }

    /** @return iterable<string, array{string, string}> */
    public static function badFiles(): iterable
    {
        yield 'no return' => ['<?php $x = 1;', 'must return a handler'];
        yield 'null' => ['<?php return null;', 'must return a handler'];
        yield 'bad method key' => ["<?php return ['GET' => 'a', 'NOT A METHOD' => 'b'];", 'not an HTTP method'];
    }

    #[DataProvider('badFiles')]
    public function testAFileThatReturnsNoHandlerIsAValueError(string $code, string $message): void
    {
        $dir = $this->tempDir();
        $this->write("$dir/x.php", $code);
        $this->expectException(\ValueError::class);
        $this->expectExceptionMessage($message);
        ApiRoutes::mount(new RouteCollector(), $dir);
    }

    public function testTwoFilesForOnePathAreAValueError(): void
    {
        $dir = $this->tempDir();
        $this->write("$dir/users.php", "<?php return 'a';");
        mkdir("$dir/users");
        $this->cleanup[] = "$dir/users";
        $this->write("$dir/users/index.php", "<?php return 'b';");
        $this->expectExceptionMessage("would both answer '/users'");
        ApiRoutes::mount(new RouteCollector(), $dir);
    }

    public function testAMissingDirectoryIsAValueError(): void
    {
        $this->expectException(\ValueError::class);
        ApiRoutes::mount(new RouteCollector(), self::FIXTURES . '/nope');
    }

    private function tempDir(): string
    {
        $dir = sys_get_temp_dir() . '/kiln-api-' . bin2hex(random_bytes(6));
        mkdir($dir);
        $this->cleanup[] = $dir;
        return $dir;
    }

    private function write(string $file, string $code): void
    {
        file_put_contents($file, $code);
        $this->cleanup[] = $file;
    }

    private function link(string $target, string $link): void
    {
        symlink($target, $link);
        $this->cleanup[] = $link;
    }
}
