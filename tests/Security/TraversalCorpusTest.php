<?php

declare(strict_types=1);

namespace Kiln\Tests\Security;

use Kiln\Tests\Support\KilnProcess;
use Kiln\Tests\Support\RawClient;
use Kiln\Tests\Unit\Site\SiteTree;
use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;

/**
 * Path traversal and encoding tricks sent on real sockets to `kiln serve ROOT`, with a secret file, a
 * secret script and a secret directory right beside the root and symlinks pointing at them: no input
 * reaches them, no PHP source is ever sent, and the server answers the next request as before.
 */
final class TraversalCorpusTest extends TestCase
{
    private static string $base = '';

    /** @var array<string, KilnProcess> */
    private static array $servers = [];

    public static function setUpBeforeClass(): void
    {
        self::$base = SiteTree::create();
        $root = self::$base . '/root';
        self::$servers['no front controller'] = KilnProcess::start($root, ['--workers=1', '--front-controller=off']);
        self::$servers['front controller'] = KilnProcess::start($root, ['--workers=1']);
    }

    public static function tearDownAfterClass(): void
    {
        foreach (self::$servers as $server) {
            $server->stop();
        }
        self::$servers = [];
        SiteTree::remove(self::$base);
    }

    /** @return iterable<string, array{string}> request targets, sent as they are */
    public static function corpus(): iterable
    {
        $targets = [
            '/../secret.txt', '/../../secret.txt', '/a/../../../../../../../../etc/passwd', '/..%2fsecret.txt',
            '/%2e%2e/secret.txt', '/%2e%2e%2fsecret.txt', '/%2E%2E/secret.txt', '/%2e%2E/secret.txt', '/.%2e/secret.txt',
            '/%2e./secret.txt', '/%252e%252e/secret.txt', '/%252e%252e%252fsecret.txt', '/%25%32%65%25%32%65/secret.txt',
            '/%c0%ae%c0%ae/secret.txt', '/%c0%ae%c0%ae%c0%afsecret.txt', '/%e0%80%ae%e0%80%ae/secret.txt',
            '/..%c0%afsecret.txt', '/..%c1%9csecret.txt', '/..\\secret.txt', '/..%5csecret.txt', '/..%5Csecret.txt',
            '/%5c..%5csecret.txt', '/%2e%2e%5csecret.txt', '/....//secret.txt', '/..../secret.txt', '/.../secret.txt',
            '/....//....//secret.txt', '/blog/../../secret.txt', '/blog/..%2f..%2fsecret.txt', '/blog/%2e%2e/%2e%2e/secret.txt',
            '/BLOG/../../secret.txt', '/./../secret.txt', '//../secret.txt', '/%2F..%2F..%2Fsecret.txt',
            '/link-out.txt', '/link-dir-out/file.txt', '/link-dir-out/../secret.txt', '/link-dir-out/', '/link-dir-out',
            '/link-php-out.php', '/link-dir-out/x.php', '/abs-link', '/secret.txt%00.css', '/style.css%00',
            '/%00../secret.txt', '/..%00/secret.txt', '/..%u2216secret.txt', '/..;/secret.txt', '/;/../secret.txt',
            '/style.css;/../../secret.txt', '/%2e%2e;/secret.txt', '/.env', '/.git/config', '/%2eenv', '/.well-known/../.env',
            '/.well-known/.hidden', '/config.inc', '/config.inc/', '/backup.php~', '/Page.PHP', '/old.php.bak',
            '/source.phps', '/view.phtml', '/link-src.txt', '/index.php/../../secret.txt', '/page.php/..%2f..%2fsecret.txt',
            '/cgi-bin/../../secret.txt', '/outdir/file.txt', '/outside.php', '/%2e%2e/outside.php',
            'http://localhost/../secret.txt', 'http://localhost/%2e%2e/secret.txt', 'HTTP://LOCALHOST/..%2fsecret.txt',
            'http://localhost/link-out.txt', 'http://localhost:1/%2e%2e%2f%2e%2e%2fetc/passwd', 'https://x/../../secret.txt',
            '*', '..', '../secret.txt', 'secret.txt', '/..%2', '/%%32%65%%32%65/secret.txt', "/..\x00/secret.txt",
            "/..\t/secret.txt", '/%ef%bc%8e%ef%bc%8e/secret.txt',
        ];
        foreach ($targets as $target) {
            yield json_encode($target, JSON_THROW_ON_ERROR | JSON_UNESCAPED_SLASHES) => [$target];
        }
    }

    #[DataProvider('corpus')]
    public function testNoTargetEscapesTheRootNorShowsASource(string $target): void
    {
        foreach (self::$servers as $name => $server) {
            $response = self::send($server, "GET $target HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
            self::assertNotNull($response, "$name: $target got no response");
            self::assertStringNotContainsString(SiteTree::SECRET, $response['raw'], "$name: $target");
            self::assertStringNotContainsString('hunter2', $response['raw'], "$name: $target");
            self::assertStringNotContainsString('<?php', $response['raw'], "$name: $target");
            self::assertStringNotContainsString('root:x:0', $response['raw'], "$name: $target");
            if ($name === 'no front controller') {
                self::assertContains($response['status'], [301, 400, 403, 404], "$name: $target");
            }
            $control = self::send($server, "GET /style.css HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
            self::assertSame(200, $control['status'] ?? null, "$name: still serving after $target");
        }
    }

    public function testPathsThatStayInsideTheRootAreServed(): void
    {
        $server = self::$servers['no front controller'];
        foreach (['/blog/../style.css', '/./style.css', '//style.css', '/%73tyle.css', '/link-in.txt', '/.well-known/acme.txt'] as $target) {
            $response = self::send($server, "GET $target HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
            self::assertSame(200, $response['status'] ?? null, $target);
        }
    }

    /** @return array{status: int, reason: string, headers: array<string, list<string>>, body: string, raw: string}|null */
    private static function send(KilnProcess $server, string $request): ?array
    {
        $client = RawClient::to($server);
        $client->send($request);
        $response = $client->readResponse();
        $client->close();
        return $response;
    }
}
