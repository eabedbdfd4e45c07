<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Site\Htaccess;

use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;

/** The stock .htaccess files of WordPress and DokuWiki, as their sites lay them out. */
final class AppHtaccessTest extends TestCase
{
    private const WP_FILES = [
        'index.php' => '<?php',
        'wp-login.php' => '<?php',
        'wp-admin/index.php' => '<?php',
        'wp-content/themes/t/style.css' => 'body{}',
        'wp-content/uploads/2024/photo.jpg' => 'jpg',
    ];

    /** @return iterable<string, array{string, string}> */
    public static function wordpress(): iterable
    {
        yield 'home page goes to the directory index' => ['/', 'serve /'];
        yield 'a pretty permalink goes to index.php' => ['/2024/05/hello-world/', 'serve /index.php'];
        yield 'the query is kept' => ['/category/news/?paged=2', 'serve /index.php?paged=2'];
        yield 'index.php itself stops at the first rule' => ['/index.php', 'serve /index.php'];
        yield 'index.php with path info is a file' => ['/index.php/2024/hello', 'serve /index.php/2024/hello'];
        yield 'an existing file is served' => ['/wp-content/themes/t/style.css', 'serve /wp-content/themes/t/style.css'];
        yield 'an existing directory is served' => ['/wp-admin/', 'serve /wp-admin/'];
        yield 'an existing script is served' => ['/wp-login.php?action=lostpassword', 'serve /wp-login.php?action=lostpassword'];
        yield 'a missing upload goes to WordPress (404 page)' => ['/wp-content/uploads/2024/nope.jpg', 'serve /index.php'];
        yield 'an encoded permalink' => ['/caf%C3%A9/', 'serve /index.php'];
        yield 'a permalink without trailing slash' => ['/sample-page', 'serve /index.php'];
    }

    #[DataProvider('wordpress')]
    public function testWordpressPermalinks(string $target, string $expected): void
    {
        $rules = Fixtures::rules(self::WP_FILES + ['.htaccess' => Fixtures::WORDPRESS]);
        self::assertSame($expected, Fixtures::describe($rules->forRequest(Fixtures::request($target))));
        self::assertSame([], $rules->takeWarnings());
    }

    public function testWordpressPassesTheAuthorizationHeaderToScripts(): void
    {
        $rules = Fixtures::rules(self::WP_FILES + ['.htaccess' => Fixtures::WORDPRESS]);
        $outcome = $rules->forRequest(Fixtures::request('/wp-json/wp/v2/posts', 'POST', ['authorization' => 'Basic YTpi']));
        self::assertSame('serve /index.php', Fixtures::describe($outcome));
        self::assertSame('Basic YTpi', $outcome->env['HTTP_AUTHORIZATION']);
        self::assertSame('Basic YTpi', $outcome->env['REDIRECT_HTTP_AUTHORIZATION']);
        self::assertSame('/wp-json/wp/v2/posts', $outcome->env['REDIRECT_URL']);
        self::assertTrue($outcome->rewritten);
    }

    public function testWordpressInASubdirectoryUsesItsBase(): void
    {
        $htaccess = str_replace(['RewriteBase /', 'RewriteRule . /index.php'], ['RewriteBase /blog/', 'RewriteRule . /blog/index.php'], Fixtures::WORDPRESS);
        $rules = Fixtures::rules(['blog/index.php' => '<?php', 'blog/.htaccess' => $htaccess, 'other.html' => 'x']);
        self::assertSame('serve /blog/index.php', Fixtures::describe($rules->forRequest(Fixtures::request('/blog/2024/hello/'))));
        self::assertSame('serve /blog/', Fixtures::describe($rules->forRequest(Fixtures::request('/blog/'))));
        self::assertSame('serve /nope/', Fixtures::describe($rules->forRequest(Fixtures::request('/nope/'))), 'outside the blog its rules do not apply');
    }

    /** A page-cache plugin's block above WordPress's: the rule's own groups used inside its conditions. */
    private const PAGE_CACHE = <<<'TXT'
        <IfModule mod_rewrite.c>
        RewriteEngine On
        RewriteBase /
        RewriteCond %{REQUEST_METHOD} !POST
        RewriteCond %{QUERY_STRING} ^$
        RewriteCond %{HTTP:Cookie} !^.*(comment_author_|wordpress_logged_in|wp-postpass_).*$
        RewriteCond %{HTTPS} !on
        RewriteCond %{DOCUMENT_ROOT}/wp-content/cache/page/%{SERVER_NAME}/$1/index.html -f
        RewriteRule ^(.*) "/wp-content/cache/page/%{SERVER_NAME}/$1/index.html" [L]
        </IfModule>

        TXT;

    public function testAPageCacheServesCachedCopiesAndFallsBackToWordpress(): void
    {
        $rules = Fixtures::rules(self::WP_FILES + [
            '.htaccess' => self::PAGE_CACHE . Fixtures::WORDPRESS,
            'wp-content/cache/page/example.com/hello/index.html' => '<h1>cached</h1>',
        ]);
        self::assertSame('serve /wp-content/cache/page/example.com/hello/index.html', Fixtures::describe($rules->forRequest(Fixtures::request('/hello/'))));
        self::assertSame('serve /index.php?s=x', Fixtures::describe($rules->forRequest(Fixtures::request('/hello/?s=x'))), 'a query skips the cache');
        self::assertSame('serve /index.php', Fixtures::describe($rules->forRequest(Fixtures::request('/hello/', headers: ['cookie' => 'wordpress_logged_in_1=a']))));
        self::assertSame('serve /index.php', Fixtures::describe($rules->forRequest(Fixtures::request('/other/'))), 'not cached yet');
        self::assertSame([], $rules->takeWarnings());
    }

    private const WIKI_FILES = [
        'doku.php' => '<?php',
        'index.php' => '<?php',
        'README' => 'readme',
        'VERSION' => '2024-02-06',
        'lib/exe/fetch.php' => '<?php',
        'lib/exe/detail.php' => '<?php',
        'lib/exe/xmlrpc.php' => '<?php',
        'lib/tpl/dokuwiki/images/logo.png' => 'png',
        'data/.htaccess' => Fixtures::DOKUWIKI_DENY,
        'data/pages/start.txt' => '====== Start ======',
        'conf/.htaccess' => Fixtures::DOKUWIKI_DENY,
        'conf/local.php' => '<?php',
        'inc/.htaccess' => Fixtures::DOKUWIKI_DENY,
        'inc/init.php' => '<?php',
    ];

    /** @return iterable<string, array{string, string}> */
    public static function dokuwikiAsShipped(): iterable
    {
        yield 'the wiki' => ['/doku.php?id=start', 'serve /doku.php?id=start'];
        yield 'pages data is refused' => ['/data/pages/start.txt', 'refuse 403'];
        yield 'the data directory is refused' => ['/data/', 'refuse 403'];
        yield 'conf is refused' => ['/conf/local.php', 'refuse 403'];
        yield 'inc is refused' => ['/inc/init.php', 'refuse 403'];
        yield 'README is refused by <Files ~>' => ['/README', 'refuse 403'];
        yield 'VERSION is refused' => ['/VERSION', 'refuse 403'];
        yield '.htaccess is refused' => ['/.htaccess', 'refuse 403'];
        yield 'a README in a subdirectory is refused too' => ['/lib/README', 'refuse 403'];
        yield 'images are served' => ['/lib/tpl/dokuwiki/images/logo.png', 'serve /lib/tpl/dokuwiki/images/logo.png'];
        yield 'no rewriting as shipped' => ['/wiki/start', 'serve /wiki/start'];
    }

    #[DataProvider('dokuwikiAsShipped')]
    public function testDokuwikiAsShipped(string $target, string $expected): void
    {
        $rules = Fixtures::rules(self::WIKI_FILES + ['.htaccess' => Fixtures::dokuwikiRoot(false)]);
        self::assertSame($expected, Fixtures::describe($rules->forRequest(Fixtures::request($target))));
        self::assertSame([], $rules->takeWarnings(), 'RedirectMatch sits in <IfModule alias_module>, which is not loaded');
    }

    /** @return iterable<string, array{string, string}> */
    public static function dokuwikiRewriting(): iterable
    {
        yield 'the start page' => ['/dokuwiki/', 'serve /dokuwiki/doku.php'];
        yield 'a page' => ['/dokuwiki/wiki:syntax', 'serve /dokuwiki/doku.php?id=wiki:syntax'];
        yield 'a page keeps its query' => ['/dokuwiki/wiki:syntax?do=edit', 'serve /dokuwiki/doku.php?id=wiki:syntax&do=edit'];
        yield 'media' => ['/dokuwiki/_media/wiki:logo.png?w=200', 'serve /dokuwiki/lib/exe/fetch.php?media=wiki:logo.png&w=200'];
        yield 'detail' => ['/dokuwiki/_detail/wiki:logo.png', 'serve /dokuwiki/lib/exe/detail.php?media=wiki:logo.png'];
        yield 'export' => ['/dokuwiki/_export/raw/wiki:syntax', 'serve /dokuwiki/doku.php?do=export_raw&id=wiki:syntax'];
        yield 'index.php goes to doku.php' => ['/dokuwiki/index.php', 'serve /dokuwiki/doku.php'];
        yield 'existing files are served' => ['/dokuwiki/lib/tpl/dokuwiki/images/logo.png', 'serve /dokuwiki/lib/tpl/dokuwiki/images/logo.png'];
        yield 'xmlrpc over http is sent to https' => ['/dokuwiki/lib/exe/xmlrpc.php', 'redirect 301 https://example.com/dokuwiki/lib/exe/xmlrpc.php'];
        yield 'data stays refused' => ['/dokuwiki/data/pages/start.txt', 'refuse 403'];
        yield 'README stays refused' => ['/dokuwiki/README', 'refuse 403'];
    }

    #[DataProvider('dokuwikiRewriting')]
    public function testDokuwikiWithRewritingEnabled(string $target, string $expected): void
    {
        $files = [];
        foreach (self::WIKI_FILES + ['.htaccess' => Fixtures::dokuwikiRoot(true)] as $path => $contents) {
            $files["dokuwiki/$path"] = $contents;
        }
        $rules = Fixtures::rules($files);
        self::assertSame($expected, Fixtures::describe($rules->forRequest(Fixtures::request($target))));
        self::assertSame([], $rules->takeWarnings());
    }

    public function testDokuwikiXmlrpcOverHttpsIsServed(): void
    {
        $rules = Fixtures::rules(self::WIKI_FILES + ['.htaccess' => str_replace('/dokuwiki', '/', Fixtures::dokuwikiRoot(true))]);
        $outcome = $rules->forRequest(Fixtures::request('/lib/exe/xmlrpc.php', 'POST', https: true));
        self::assertSame('serve /lib/exe/xmlrpc.php', Fixtures::describe($outcome));
    }

    public function testDokuwikiDenyFilesFallBackToAccessCompatWithoutAuthzCore(): void
    {
        // The same file read by a server without mod_authz_core: the Order/Deny half must refuse alone.
        $rules = Fixtures::rules(['data/.htaccess' => "Order allow,deny\nDeny from all\n", 'data/x.txt' => 'x']);
        self::assertSame('refuse 403', Fixtures::describe($rules->forRequest(Fixtures::request('/data/x.txt'))));
    }
}
