<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Site;

use Kiln\Site\PathResolver;
use Kiln\Site\Redirect;
use Kiln\Site\Refusal;
use Kiln\Site\Script;
use Kiln\Site\StaticFile;
use Kiln\Site\SymlinkPolicy;
use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;

final class PathResolverTest extends TestCase
{
    private static string $base = '';

    public static function setUpBeforeClass(): void
    {
        self::$base = SiteTree::create();
    }

    public static function tearDownAfterClass(): void
    {
        SiteTree::remove(self::$base);
    }

    /**
     * What each path resolves to, as "file REL", "script REL SCRIPT_NAME [PATH_INFO]", "redirect LOCATION"
     * or "refuse STATUS" (REL: relative to the root; escapes would show as OUTSIDE:…).
     *
     * @return iterable<string, array{string, string}>
     */
    public static function paths(): iterable
    {
        // Scripts, extensionless, PATH_INFO
        yield 'root index.php' => ['/', 'script index.php /index.php'];
        yield 'index.php by name' => ['/index.php', 'script index.php /index.php'];
        yield 'index without extension' => ['/index', 'script index.php /index.php'];
        yield 'a script' => ['/page.php', 'script page.php /page.php'];
        yield 'a script without its extension' => ['/page', 'script page.php /page.php'];
        yield 'extensionless with path info' => ['/page/extra', 'script page.php /page.php /extra'];
        yield 'path info' => ['/index.php/foo/bar', 'script index.php /index.php /foo/bar'];
        yield 'path info keeps its trailing slash' => ['/index.php/foo/bar/', 'script index.php /index.php /foo/bar/'];
        yield 'path info of a slash' => ['/index.php/', 'script index.php /index.php /'];
        yield 'path info merges slashes' => ['/index.php//foo//bar', 'script index.php /index.php /foo/bar'];
        yield 'path info decoded' => ['/api.php/users/a%20b', 'script api.php /api.php /users/a b'];
        yield 'script in a folder with path info' => ['/a/b.php/x', 'script a/b.php /a/b.php /x'];
        yield 'extensionless in a folder with path info' => ['/a/b/x', 'script a/b.php /a/b.php /x'];
        yield 'encoded dot of the extension' => ['/page%2ephp', 'script page.php /page.php'];
        yield 'first script on the path wins' => ['/page.php/index.php', 'script page.php /page.php /index.php'];
        // Directories
        yield 'directory without slash' => ['/blog', 'redirect /blog/'];
        yield 'directory redirect keeps the query' => ['/blog?p=1&q=%20', 'redirect /blog/?p=1&q=%20'];
        yield 'directory index.php' => ['/blog/', 'script blog/index.php /blog/index.php'];
        yield 'directory index.html' => ['/docs/', 'file docs/index.html'];
        yield 'index.php before index.html' => ['/both-index/', 'script both-index/index.php /both-index/index.php'];
        yield 'directory without an index' => ['/empty/', 'refuse 403'];
        yield 'directory wins over extensionless' => ['/thing', 'redirect /thing/'];
        yield 'that directory' => ['/thing/', 'file thing/index.html'];
        yield 'directory redirect re-encodes' => ['/my%20dir', 'redirect /my%20dir/'];
        yield 'double slash cannot redirect off-site' => ['//blog', 'redirect /blog/'];
        yield 'script in a folder' => ['/blog/post.php', 'script blog/post.php /blog/post.php'];
        yield 'extensionless in a folder' => ['/blog/post', 'script blog/post.php /blog/post.php'];
        yield 'index extensionless in a folder' => ['/blog/index', 'script blog/index.php /blog/index.php'];
        // Static files
        yield 'static file' => ['/style.css', 'file style.css'];
        yield 'html file' => ['/about.html', 'file about.html'];
        yield 'file without extension wins over extensionless' => ['/both', 'file both'];
        yield 'file named plainly' => ['/plain', 'file plain'];
        yield 'deep file' => ['/deep/er/est/file.txt', 'file deep/er/est/file.txt'];
        yield 'encoded spaces' => ['/my%20dir/file%20name.txt', 'file my dir/file name.txt'];
        yield 'UTF-8 name' => ['/caf%C3%A9.txt', 'file café.txt'];
        yield 'plus is not a space' => ['/a+b.txt', 'file a+b.txt'];
        yield 'well-known' => ['/.well-known/acme.txt', 'file .well-known/acme.txt'];
        // Front controller
        yield 'nothing matches' => ['/missing', 'script index.php /index.php'];
        yield 'nothing matches, deep' => ['/missing/deep/path/', 'script index.php /index.php'];
        yield 'missing script' => ['/missing.php', 'script index.php /index.php'];
        yield 'a file is not a directory' => ['/style.css/x', 'script index.php /index.php'];
        yield 'a file with a slash' => ['/style.css/', 'script index.php /index.php'];
        yield 'double-encoded dots stay a name' => ['/%252e%252e/secret.txt', 'script index.php /index.php'];
        yield 'overlong UTF-8 dots stay a name' => ['/%c0%ae%c0%ae/secret.txt', 'script index.php /index.php'];
        yield 'under a directory that escapes, nothing' => ['/link-dir-out/missing', 'script index.php /index.php'];
        // Dot segments
        yield 'dot segment' => ['/./style.css', 'file style.css'];
        yield 'double slash' => ['//style.css', 'file style.css'];
        yield 'dot-dot inside the root' => ['/blog/../style.css', 'file style.css'];
        yield 'dot-dot after a script' => ['/page.php/../style.css', 'file style.css'];
        yield 'dot segment in a folder' => ['/blog/./post.php', 'script blog/post.php /blog/post.php'];
        yield 'dot-dot back to the root' => ['/blog/..', 'script index.php /index.php'];
        yield 'dot-dot above the root' => ['/../secret.txt', 'refuse 400'];
        yield 'encoded dot-dot above the root' => ['/%2e%2e/secret.txt', 'refuse 400'];
        yield 'mixed-case encoded dot-dot' => ['/%2E%2e/secret.txt', 'refuse 400'];
        yield 'dot-dot above the root from a folder' => ['/blog/../../secret.txt', 'refuse 400'];
        yield 'trailing dot-dot above the root' => ['/..', 'refuse 400'];
        // Malformed
        yield 'encoded slash' => ['/blog%2fpost.php', 'refuse 400'];
        yield 'encoded slash, upper case' => ['/blog%2Fpost.php', 'refuse 400'];
        yield 'encoded backslash' => ['/blog%5cpost.php', 'refuse 400'];
        yield 'backslash' => ['/blog\\post.php', 'refuse 400'];
        yield 'encoded NUL' => ['/page.php%00.txt', 'refuse 400'];
        yield 'encoded newline' => ['/a%0ab', 'refuse 400'];
        yield 'encoded DEL' => ['/a%7fb', 'refuse 400'];
        yield 'bad percent-encoding' => ['/a%zzb', 'refuse 400'];
        yield 'truncated percent-encoding' => ['/a%2', 'refuse 400'];
        yield 'lone percent' => ['/a%', 'refuse 400'];
        yield 'asterisk' => ['*', 'refuse 400'];
        yield 'empty' => ['', 'refuse 400'];
        yield 'relative' => ['style.css', 'refuse 400'];
        // Hidden files
        yield 'dotfile' => ['/.env', 'refuse 404'];
        yield 'htaccess' => ['/.htaccess', 'refuse 404'];
        yield 'dot directory' => ['/.git/config', 'refuse 404'];
        yield 'dotfile in a folder' => ['/blog/.hidden', 'refuse 404'];
        yield 'dotfile under well-known' => ['/.well-known/.hidden', 'refuse 404'];
        yield 'well-known only at the top' => ['/blog/.well-known/x', 'refuse 404'];
        yield 'encoded dotfile' => ['/%2eenv', 'refuse 404'];
        yield 'dotfile as path info is the script\'s' => ['/index.php/.env', 'script index.php /index.php /.env'];
        yield 'well-known as path info' => ['/page.php/.well-known/caldav', 'script page.php /page.php /.well-known/caldav'];
        yield 'dot folder deep in path info' => ['/a/b.php/x/.git/config', 'script a/b.php /a/b.php /x/.git/config'];
        yield 'dotfile as path info of an extensionless script' => ['/page/.env', 'script page.php /page.php /.env'];
        yield 'dotfile after a static file' => ['/style.css/.env', 'refuse 404'];
        yield 'dotfile after a missing name' => ['/missing/.env', 'refuse 404'];
        yield 'script in a dot folder' => ['/.git/x.php/y', 'refuse 404'];
        // Sources never sent
        yield 'include file' => ['/config.inc', 'refuse 403'];
        yield 'editor backup' => ['/backup.php~', 'refuse 403'];
        yield 'phps' => ['/source.phps', 'refuse 403'];
        yield 'bak' => ['/old.php.bak', 'refuse 403'];
        yield 'upper-case extension is not run, not sent' => ['/Page.PHP', 'refuse 403'];
        yield 'phtml' => ['/view.phtml', 'refuse 403'];
        // Symlinks
        yield 'symlink inside the root' => ['/link-in.txt', 'file style.css'];
        yield 'symlinked directory inside the root' => ['/link-dir-in/post.php', 'script link-dir-in/post.php /link-dir-in/post.php'];
        yield 'symlink out of the root' => ['/link-out.txt', 'refuse 404'];
        yield 'absolute symlink out of the root' => ['/abs-link', 'refuse 404'];
        yield 'file under a directory symlinked out' => ['/link-dir-out/file.txt', 'refuse 404'];
        yield 'directory symlinked out' => ['/link-dir-out/', 'refuse 404'];
        yield 'directory symlinked out, no slash' => ['/link-dir-out', 'refuse 404'];
        yield 'script under a directory symlinked out' => ['/link-dir-out/x.php', 'refuse 404'];
        yield 'script symlinked out' => ['/link-php-out.php', 'refuse 404'];
        yield 'symlink to a source file' => ['/link-src.txt', 'refuse 403'];
    }

    public function testLinksOutOfTheRootAreFollowedAsTheSymlinkPolicySaysAndARefusalSaysWhy(): void
    {
        $inside = (new PathResolver(self::$base . '/root'))->resolve('/link-php-out.php');
        self::assertInstanceOf(Refusal::class, $inside);
        self::assertTrue($inside->logged, 'a refused link is logged');
        self::assertStringContainsString('link-php-out.php leads out of the document root', $inside->reason);
        foreach ([SymlinkPolicy::OwnerMatch, SymlinkPolicy::Follow] as $policy) {
            $resolver = new PathResolver(self::$base . '/root', symlinks: $policy);
            $script = $resolver->resolve('/link-php-out.php');
            self::assertInstanceOf(Script::class, $script, $policy->value);
            self::assertSame(self::$base . '/root/link-php-out.php', $script->filename, 'SCRIPT_FILENAME is the path as requested');
            self::assertSame(self::$base . '/outside.php', $script->realPath());
            $file = $resolver->resolve('/link-dir-out/file.txt');
            self::assertInstanceOf(StaticFile::class, $file, $policy->value);
            self::assertSame(self::$base . '/root/link-dir-out/file.txt', $file->realPath, 'opened through the link');
        }
        // abs-link (ours) points to /etc/passwd (root's): the same owner only when the tests run as root.
        $owner = SymlinkPolicy::OwnerMatch->refusal(self::$base . '/root', self::$base . '/root/abs-link', '/etc/passwd');
        if (posix_getuid() === fileowner('/etc/passwd')) {
            self::assertNull($owner);
        } else {
            self::assertStringContainsString('--symlinks=owner follows a link out of the document root only when both have the same owner', (string) $owner);
        }
        self::assertNull(SymlinkPolicy::Follow->refusal(self::$base . '/root', self::$base . '/root/abs-link', '/etc/passwd'));
    }

    #[DataProvider('paths')]
    public function testEachPathResolvesAsAWebServerWould(string $target, string $expected): void
    {
        [$path, $query] = array_pad(explode('?', $target, 2), 2, '');
        $resolver = new PathResolver(self::$base . '/root');
        self::assertSame($expected, $this->describe($resolver->resolve($path, $query)), $target);
    }

    public function testWithoutAFrontControllerNothingMatchingIsNotFound(): void
    {
        $resolver = new PathResolver(self::$base . '/root', null);
        self::assertSame('refuse 404', $this->describe($resolver->resolve('/missing')));
        self::assertSame('refuse 404', $this->describe($resolver->resolve('/style.css/x')));
        self::assertSame('script index.php /index.php', $this->describe($resolver->resolve('/')));
    }

    public function testARequestCanLeaveTheFrontControllerOut(): void
    {
        $resolver = new PathResolver(self::$base . '/root');
        self::assertSame('refuse 404', $this->describe($resolver->resolve('/missing', frontController: false)));
        self::assertSame('refuse 404', $this->describe($resolver->resolve('/style.css/x', frontController: false)));
        self::assertSame('script page.php /page.php /extra', $this->describe($resolver->resolve('/page/extra', frontController: false)));
        self::assertSame('script index.php /index.php', $this->describe($resolver->resolve('/missing')), 'the next request has it again');
    }

    public function testTheFrontControllerCanBeAnotherScript(): void
    {
        $resolver = new PathResolver(self::$base . '/root', '/blog/index.php');
        self::assertSame('script blog/index.php /blog/index.php', $this->describe($resolver->resolve('/missing/x')));
    }

    public function testAFrontControllerThatDoesNotExistGivesNotFound(): void
    {
        $resolver = new PathResolver(self::$base . '/root', '/nope.php');
        self::assertSame('refuse 404', $this->describe($resolver->resolve('/missing')));
    }

    public function testIndexFilesAreTriedInTheOrderGiven(): void
    {
        $resolver = new PathResolver(self::$base . '/root', indexFiles: ['index.html', 'index.php']);
        self::assertSame('file both-index/index.html', $this->describe($resolver->resolve('/both-index/')));
    }

    public function testOneRequestCanTryOtherIndexFilesOrNone(): void
    {
        $resolver = new PathResolver(self::$base . '/root');
        self::assertSame('file both-index/index.html', $this->describe($resolver->resolve('/both-index/', '', ['index.html'])));
        self::assertSame('refuse 403', $this->describe($resolver->resolve('/both-index/', '', [])));
        self::assertSame('refuse 403', $this->describe($resolver->resolve('/docs/', '', ['../index.php', '.hidden', "index.html\0"])), 'names only');
        self::assertSame('script both-index/index.php /both-index/index.php', $this->describe($resolver->resolve('/both-index/')), 'the default again');
    }

    public function testADeletedScriptIsSeenAtOnceWithoutAScriptTtl(): void
    {
        $file = self::$base . '/root/gone-now.php';
        file_put_contents($file, '<?php echo 1;');
        $resolver = new PathResolver(self::$base . '/root', null, scriptTtl: 0);
        self::assertSame('script gone-now.php /gone-now.php', $this->describe($resolver->resolve('/gone-now.php')));
        unlink($file);
        self::assertSame('refuse 404', $this->describe($resolver->resolve('/gone-now.php')));
    }

    public function testAScriptFoundIsTrustedForItsTtlButANewOrDeletedStaticFileIsSeenAtOnce(): void
    {
        $script = self::$base . '/root/gone-later.php';
        $static = self::$base . '/root/gone-later.txt';
        file_put_contents($script, '<?php echo 1;');
        file_put_contents($static, 'x');
        $resolver = new PathResolver(self::$base . '/root', null, scriptTtl: 60, isCached: static fn(string $file): bool => true);
        self::assertSame('refuse 404', $this->describe($resolver->resolve('/new-later.php')));
        self::assertSame('script gone-later.php /gone-later.php', $this->describe($resolver->resolve('/gone-later.php')));
        self::assertSame('file gone-later.txt', $this->describe($resolver->resolve('/gone-later.txt')));
        unlink($script);
        unlink($static);
        file_put_contents(self::$base . '/root/new-later.php', '<?php echo 1;');
        try {
            // opcache would run the deleted script's cached code as long: the resolver does not look either.
            self::assertSame('script gone-later.php /gone-later.php', $this->describe($resolver->resolve('/gone-later.php')));
            self::assertSame('refuse 404', $this->describe($resolver->resolve('/gone-later.txt')), 'static files are looked at every time');
            self::assertSame('script new-later.php /new-later.php', $this->describe($resolver->resolve('/new-later.php')), 'a new file is seen at once');
        } finally {
            unlink(self::$base . '/root/new-later.php');
        }
    }

    public function testAScriptOpcacheDoesNotHoldIsLookedAtEveryTime(): void
    {
        $file = self::$base . '/root/not-cached.php';
        file_put_contents($file, '<?php echo 1;');
        $resolver = new PathResolver(self::$base . '/root', null, scriptTtl: 60, isCached: static fn(string $file): bool => false);
        self::assertSame('script not-cached.php /not-cached.php', $this->describe($resolver->resolve('/not-cached.php')));
        self::assertSame('script not-cached.php /not-cached.php', $this->describe($resolver->resolve('/not-cached.php')));
        unlink($file);
        self::assertSame('refuse 404', $this->describe($resolver->resolve('/not-cached.php')), 'blacklisted, too large, cache full: a stat each time');
    }

    public function testMappedExtensionsAreScriptsToo(): void
    {
        $resolver = new PathResolver(self::$base . '/root', scriptExtensions: ['.php', '.py']);
        self::assertSame('script tool.py /tool.py /x', $this->describe($resolver->resolve('/tool.py/x')));
        self::assertSame('file tool.py', $this->describe((new PathResolver(self::$base . '/root'))->resolve('/tool.py')));
    }

    /** @return iterable<string, array{string, string}> */
    public static function cgiPaths(): iterable
    {
        yield 'CGI script' => ['/cgi-bin/hello.py', 'script ../cgi/hello.py /cgi-bin/hello.py'];
        yield 'CGI script with path info' => ['/cgi-bin/hello.py/x/y/', 'script ../cgi/hello.py /cgi-bin/hello.py /x/y/'];
        yield 'not executable' => ['/cgi-bin/noexec.py', 'refuse 403'];
        yield 'no listing' => ['/cgi-bin/', 'refuse 403'];
        yield 'no listing without slash' => ['/cgi-bin', 'refuse 403'];
        yield 'missing' => ['/cgi-bin/missing', 'refuse 404'];
        yield 'a directory is not listed' => ['/cgi-bin/sub/', 'refuse 403'];
        yield 'in a subdirectory' => ['/cgi-bin/sub/run.sh/a', 'script ../cgi/sub/run.sh /cgi-bin/sub/run.sh /a'];
        yield 'missing in a subdirectory' => ['/cgi-bin/sub/nope/a', 'refuse 404'];
        yield 'symlink out of cgi-bin' => ['/cgi-bin/link-out', 'refuse 404'];
        yield 'dotfile' => ['/cgi-bin/.env', 'refuse 404'];
        yield 'dotfile as path info' => ['/cgi-bin/hello.py/.well-known/x', 'script ../cgi/hello.py /cgi-bin/hello.py /.well-known/x'];
        yield 'dot folder before the script' => ['/cgi-bin/.sub/run.sh', 'refuse 404'];
        yield 'climbing out of cgi-bin is a root path' => ['/cgi-bin/../style.css', 'file style.css'];
    }

    #[DataProvider('cgiPaths')]
    public function testCgiBinServesItsExecutables(string $path, string $expected): void
    {
        $resolver = new PathResolver(self::$base . '/root', cgiBin: self::$base . '/cgi');
        self::assertSame($expected, $this->describe($resolver->resolve($path)));
    }

    public function testAFileRemovedIsNoLongerServed(): void
    {
        $resolver = new PathResolver(self::$base . '/root');
        file_put_contents(self::$base . '/root/fleeting.txt', 'x');
        self::assertSame('file fleeting.txt', $this->describe($resolver->resolve('/fleeting.txt')));
        unlink(self::$base . '/root/fleeting.txt');
        self::assertSame('script index.php /index.php', $this->describe($resolver->resolve('/fleeting.txt')));
    }

    public function testScriptsCarryTheRealRoot(): void
    {
        $script = (new PathResolver(self::$base . '/root/blog/..'))->resolve('/page.php');
        self::assertInstanceOf(Script::class, $script);
        self::assertSame(realpath(self::$base . '/root'), $script->documentRoot);
        self::assertSame(realpath(self::$base . '/root/page.php'), $script->filename);
    }

    /** @return iterable<string, array{\Closure(string): PathResolver, string}> */
    public static function misuses(): iterable
    {
        yield 'missing root' => [static fn(string $base) => new PathResolver("$base/nope"), "is not a directory"];
        yield 'root is a file' => [static fn(string $base) => new PathResolver("$base/root/style.css"), 'is not a directory'];
        yield 'relative front controller' => [static fn(string $base) => new PathResolver("$base/root", 'index.php'), 'Front controller'];
        yield 'front controller climbing' => [static fn(string $base) => new PathResolver("$base/root", '/../x.php'), 'Front controller'];
        yield 'extension without dot' => [static fn(string $base) => new PathResolver("$base/root", scriptExtensions: ['php']), 'Script extension'];
        yield 'missing cgi-bin' => [static fn(string $base) => new PathResolver("$base/root", cgiBin: "$base/nope"), 'cgi-bin'];
    }

    /** @param \Closure(string): PathResolver $build */
    #[DataProvider('misuses')]
    public function testMisconfigurationIsRefusedAtOnce(\Closure $build, string $message): void
    {
        $this->expectException(\ValueError::class);
        $this->expectExceptionMessage($message);
        $build(self::$base);
    }

    private function describe(Script|StaticFile|Redirect|Refusal $outcome): string
    {
        return match (true) {
            $outcome instanceof StaticFile => 'file ' . $this->relative($outcome->realPath),
            $outcome instanceof Script => rtrim("script {$this->relative($outcome->filename)} {$outcome->scriptName} {$outcome->pathInfo}"),
            $outcome instanceof Redirect => "redirect {$outcome->location}" . ($outcome->status === 301 ? '' : " ($outcome->status)"),
            default => "refuse {$outcome->status}",
        };
    }

    private function relative(string $path): string
    {
        $root = self::$base . '/root/';
        if (str_starts_with($path, $root)) {
            return substr($path, \strlen($root));
        }
        return str_starts_with($path, self::$base . '/') ? '../' . substr($path, \strlen(self::$base) + 1) : "OUTSIDE:$path";
    }
}
