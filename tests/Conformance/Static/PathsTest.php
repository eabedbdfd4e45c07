<?php

declare(strict_types=1);

namespace Kiln\Tests\Conformance\Static;

use PHPUnit\Framework\Attributes\DataProvider;

/** Directories, dotfiles, symlinks, PHP sources and hostile paths, over real sockets. */
final class PathsTest extends StaticTestCase
{
    public function testADirectoryWithoutItsSlashIsRedirectedKeepingTheQuery(): void
    {
        $response = self::get('/sub');
        self::assertSame(301, $response['status']);
        self::assertSame('/sub/', self::header($response, 'Location'));
        self::assertSame('/sub/?a=1&b=%20', self::header(self::get('/sub?a=1&b=%20'), 'Location'));
        self::assertSame('/link-dir/', self::header(self::get('/link-dir'), 'Location'));
        self::assertSame('/a%20b/', self::header(self::get('/a%20b'), 'Location'));
    }

    public function testARedirectNeverBecomesProtocolRelative(): void
    {
        $response = self::get('//sub');
        self::assertSame(301, $response['status']);
        self::assertSame('/sub/', self::header($response, 'Location'));
    }

    public function testADirectoryServesItsIndex(): void
    {
        self::assertSame("<h1>index</h1>\n", self::get('/')['body']);
        $sub = self::get('/sub/');
        self::assertSame(200, $sub['status']);
        self::assertSame("<p>sub index</p>\n", $sub['body']);
        self::assertSame('text/html; charset=utf-8', self::header($sub, 'Content-Type'));
        self::assertSame("<p>sub index</p>\n", self::get('/link-dir/')['body'], 'a symlinked directory inside the root');
        self::assertSame("<p>sub page</p>\n", self::get('/link-dir/page.html')['body']);
    }

    public function testADirectoryWithoutAnIndexIsForbiddenAndNeverListed(): void
    {
        $response = self::get('/noindex/');
        self::assertSame(403, $response['status']);
        self::assertStringNotContainsString('file.txt', $response['body']);
        self::assertSame("in noindex\n", self::get('/noindex/file.txt')['body']);
    }

    public function testEncodedNamesAreDecodedOnce(): void
    {
        self::assertSame("spaces\n", self::get('/a%20b/c%20d.txt')['body']);
        self::assertSame("a directory named %2e%2e\n", self::get('/%252e%252e/literal.txt')['body']);
    }

    public function testInRootSymlinksAreServed(): void
    {
        self::assertSame("Hello, world!\n", self::get('/link-in.txt')['body']);
    }

    /** @return iterable<string, array{string, list<int>}> */
    public static function refused(): iterable
    {
        yield 'symlink to a file outside the root' => ['/link-out.txt', [404]];
        yield 'through a symlinked directory outside the root' => ['/link-out-dir/secret.txt', [404]];
        yield 'symlinked directory outside the root itself' => ['/link-out-dir/', [404]];
        yield 'symlinked directory outside the root, no slash' => ['/link-out-dir', [404]];
        yield 'symlink to a dotfile' => ['/link-to-dotfile.txt', [404]];
        yield 'symlink to a PHP source' => ['/link-to-source.txt', [403]];
        yield 'dotfile' => ['/.env', [404]];
        yield 'dot directory' => ['/.git/config', [404]];
        yield 'dot directory itself' => ['/.git/', [404]];
        yield 'nested dotfile' => ['/sub/.htaccess', [404]];
        yield 'encoded dotfile' => ['/%2eenv', [404]];
        yield 'PHP source' => ['/page.php', [403]];
        yield 'include file' => ['/config.inc', [403]];
        yield 'editor backup' => ['/page.php~', [403]];
        yield 'backup copy' => ['/page.php.bak', [403]];
        yield 'phtml' => ['/page.phtml', [403]];
        yield 'upper-case extension' => ['/PAGE.PHP', [403, 404]];
        yield 'dot-dot' => ['/../outside/secret.txt', [400]];
        yield 'dot-dot inside' => ['/sub/../../outside/secret.txt', [400]];
        yield 'encoded dot-dot' => ['/%2e%2e/outside/secret.txt', [400]];
        yield 'mixed-case encoded dot-dot' => ['/%2E%2e/outside/secret.txt', [400]];
        yield 'half-encoded dot-dot' => ['/.%2e/outside/secret.txt', [400]];
        yield 'double-encoded dot-dot' => ['/%252e%252e/outside/secret.txt', [404]];
        yield 'dot segment' => ['/./hello.txt', [400]];
        yield 'encoded slash' => ['/sub%2f..%2f..%2foutside%2fsecret.txt', [400]];
        yield 'encoded backslash' => ['/..%5coutside%5csecret.txt', [400]];
        yield 'raw backslash' => ['/..\\outside\\secret.txt', [400]];
        yield 'encoded NUL' => ['/hello.txt%00.html', [400]];
        yield 'overlong UTF-8 dot' => ['/%c0%ae%c0%ae/outside/secret.txt', [404]];
        yield 'trailing slash on a file' => ['/hello.txt/', [404]];
        yield 'missing file' => ['/nope.txt', [404]];
        yield 'absolute-form with dot-dot' => ['http://localhost/../outside/secret.txt', [400]];
    }

    /** @param list<int> $statuses */
    #[DataProvider('refused')]
    public function testHiddenOutsideAndSourceFilesAreNeverSent(string $target, array $statuses): void
    {
        $response = self::get($target);
        self::assertContains($response['status'], $statuses);
        foreach (['SECRET', 'password', 'hunter2', '<?php'] as $secret) {
            self::assertStringNotContainsString($secret, $response['body']);
        }
    }

    public function testWellKnownIsTheOneServedDotDirectory(): void
    {
        $response = self::get('/.well-known/acme.txt');
        self::assertSame(200, $response['status']);
        self::assertSame("acme\n", $response['body']);
    }
}
