<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Htaccess;

use Kiln\Site\Htaccess\HtaccessRules;
use Kiln\Site\Htaccess\RequestFacts;
use Kiln\Site\Htaccess\Verdict;
use Kiln\Site\PathResolver;
use Kiln\Site\Redirect;
use Kiln\Site\Refusal;
use Kiln\Site\Script;
use Kiln\Tests\Support\ApacheProcess;
use Kiln\Tests\Support\HttpClient;
use Kiln\Tests\Support\PeerProcess;
use Kiln\Tests\Unit\Site\Htaccess\Fixtures;
use PHPUnit\Framework\TestCase;

/**
 * The same document root and .htaccess files through a real Apache 2.4 (AllowOverride All) and through
 * HtaccessRules + PathResolver: each request must end at the same script (SCRIPT_NAME, PATH_INFO, query
 * and the rewrite variables), the same static file, the same redirect or the same refusal.
 */
final class ApacheParityTest extends TestCase
{
    private const SCRIPT = <<<'PHP'
        <?php
        $env = [];
        foreach (['SEEN', 'PARENT', 'CHILD', 'HTTP_AUTHORIZATION', 'REDIRECT_URL', 'REDIRECT_SEEN', 'REDIRECT_PARENT'] as $name) {
            if (isset($_SERVER[$name])) {
                $env[] = "$name=" . $_SERVER[$name];
            }
        }
        echo 'script ', $_SERVER['SCRIPT_NAME'], ' ', $_SERVER['PATH_INFO'] ?? '', ' ?', $_SERVER['QUERY_STRING'] ?? '', ' ', implode(',', $env);
        PHP;

    private const FLAGS = <<<'TXT'
        RewriteEngine On
        RewriteRule ^target\.php$ - [E=SEEN:yes]
        RewriteRule ^l1$ target.php [L]
        RewriteRule ^qsa$ target.php?b=2 [QSA,L]
        RewriteRule ^qsd$ target.php [QSD,L]
        RewriteRule ^lone$ target.php? [L]
        RewriteRule ^r301$ /flags/target.php [R=301,L]
        RewriteRule ^r302/(.*)$ /flags/$1 [R,L]
        RewriteRule ^ne/(.*)$ /flags/target.php#$1 [R,NE,L]
        RewriteRule ^esc/(.*)$ /flags/target.php#$1 [R,L]
        RewriteRule ^f$ - [F]
        RewriteRule ^g$ - [G]
        RewriteRule ^loop(.*)$ loop$1x
        RewriteRule ^end$ blocked.php [END]
        RewriteRule ^last$ blocked.php [L]
        RewriteRule ^blocked\.php$ - [F]
        RewriteRule ^nc$ target.php [NC,L]
        RewriteCond %{QUERY_STRING} ^id=(\d+)$
        RewriteRule ^item$ target.php?item=%1 [L]
        RewriteRule ^back/(\w+)/(\w+)$ target.php?a=$2&b=$1 [L]
        RewriteRule ^abs$ /flags/target.php [L]
        RewriteCond %{REQUEST_METHOD} =GET
        RewriteCond %{HTTPS} !=on
        RewriteRule ^cond$ target.php?cond=1 [L]
        TXT;

    private const MORE = <<<'TXT'
        RewriteEngine On
        RewriteRule ^(.*)$ - [E=PARENT:$1]
        RewriteRule ^chain$ t.php [C]
        RewriteRule ^t\.php$ t.php?chained=1 [L]
        RewriteRule ^skip$ - [S=1]
        RewriteRule ^skip$ - [F]
        RewriteRule ^skip$ t.php?skipped=1 [L]
        RewriteRule ^b/(.*)$ t.php?q=$1 [B,L]
        RewriteRule ^nob/(.*)$ t.php?q=$1 [L]
        RewriteRule ^dash$ - [R=302]
        RewriteCond %{QUERY_STRING} (^|&)go=([a-z]+)
        RewriteRule ^go$ t.php?to=%2 [L]
        RewriteCond %{HTTP_HOST} ^127\.0\.0\.1: [NC,OR]
        RewriteCond %{HTTP_HOST} ^localhost
        RewriteRule ^host$ t.php?host=yes [L]
        RewriteCond %{REQUEST_URI} ^/more/uri$
        RewriteRule ^uri$ t.php?uri=yes [L]
        RewriteCond %{THE_REQUEST} "^GET /more/req\?x=1 HTTP"
        RewriteRule ^req$ t.php?req=yes [L]
        TXT;

    /** @return array<string, string> path under the root => contents */
    private static function site(): array
    {
        $wordpress = str_replace(['RewriteBase /', 'RewriteRule . /index.php'], ['RewriteBase /wp/', 'RewriteRule . /wp/index.php'], Fixtures::WORDPRESS);
        return [
            'index.php' => self::SCRIPT,
            'wp/.htaccess' => $wordpress,
            'wp/index.php' => self::SCRIPT,
            'wp/wp-login.php' => self::SCRIPT,
            'wp/style.css' => 'static',
            'wp/wp-admin/index.php' => self::SCRIPT,
            'wiki/.htaccess' => str_replace('/dokuwiki', '/wiki', Fixtures::dokuwikiRoot(true)),
            'wiki/doku.php' => self::SCRIPT,
            'wiki/index.php' => self::SCRIPT,
            'wiki/README' => 'readme',
            'wiki/lib/exe/fetch.php' => self::SCRIPT,
            'wiki/lib/exe/detail.php' => self::SCRIPT,
            'wiki/lib/exe/xmlrpc.php' => self::SCRIPT,
            'wiki/lib/images/logo.png' => 'png',
            'wiki/data/.htaccess' => Fixtures::DOKUWIKI_DENY,
            'wiki/data/pages/start.txt' => 'page',
            'flags/.htaccess' => self::FLAGS,
            'flags/target.php' => self::SCRIPT,
            'flags/blocked.php' => self::SCRIPT,
            'inherit/.htaccess' => "RewriteEngine On\nRewriteRule ^(.*)$ - [E=PARENT:$1]\nRewriteRule ^sub/p$ target.php [L]\n",
            'inherit/target.php' => self::SCRIPT,
            'inherit/sub/.htaccess' => "RewriteOptions Inherit\nRewriteRule ^(c)$ ../target.php?c=$1 [E=CHILD:$1,L]\n",
            'inherit/sub/target.php' => self::SCRIPT,
            'inherit/plain/.htaccess' => "Header set X-Plain 1\n",
            'inherit/plain/target.php' => self::SCRIPT,
            'access/.htaccess' => "<Files secret.txt>\nRequire all denied\n</Files>\n",
            'access/secret.txt' => 'secret',
            'access/open.txt' => 'open',
            'access/sub/.htaccess' => "Require all granted\n",
            'access/sub/secret.txt' => 'secret',
            'access/compat/.htaccess' => "Order allow,deny\nAllow from all\nDeny from 127.0.0.1\n",
            'access/compat/f.txt' => 'f',
            'access/compat2/.htaccess' => "Order deny,allow\nDeny from all\nAllow from 127.0\n",
            'access/compat2/f.txt' => 'f',
            'access/ip/.htaccess' => "Require ip 10.0.0.0/8\n",
            'access/ip/f.txt' => 'f',
            'access/all/.htaccess' => "<RequireAll>\nRequire all granted\nRequire not ip 127.0.0.1\n</RequireAll>\n",
            'access/all/f.txt' => 'f',
            'access/match/.htaccess' => "<FilesMatch \"\\.(log|ini)$\">\nRequire all denied\n</FilesMatch>\n",
            'access/match/a.log' => 'log',
            'access/match/a.txt' => 'txt',
            'access/limit/.htaccess' => "<Limit POST>\nRequire all denied\n</Limit>\n",
            'access/limit/f.txt' => 'f',
            'access/except/.htaccess' => "<LimitExcept POST>\nRequire all denied\n</LimitExcept>\n",
            'access/except/f.txt' => 'f',
            'access/none/.htaccess' => "<RequireAll>\nRequire all granted\n<RequireNone>\nRequire ip 127.0.0.1\n</RequireNone>\n</RequireAll>\n",
            'access/none/f.txt' => 'f',
            'access/partial/.htaccess' => "Require ip 127 10.1\n",
            'access/partial/f.txt' => 'f',
            'access/local/.htaccess' => "Require local\n",
            'access/local/f.txt' => 'f',
            'mix/a/.htaccess' => "Require all granted\nDeny from all\n",
            'mix/a/f.txt' => 'f',
            'mix/b/.htaccess' => "Require all denied\n",
            'mix/b/c/.htaccess' => "Order allow,deny\nAllow from all\n",
            'mix/b/c/f.txt' => 'f',
            'mix/d/.htaccess' => "Order deny,allow\nDeny from all\n",
            'mix/d/e/.htaccess' => "Require all granted\n",
            'mix/d/e/f.txt' => 'f',
            'mix/g/.htaccess' => "Require all denied\n",
            'mix/g/h/.htaccess' => "Require all granted\n",
            'mix/g/h/f.txt' => 'f',
            'mix/i/.htaccess' => "<Files f.txt>\nOrder allow,deny\nDeny from all\n</Files>\n",
            'mix/i/j/.htaccess' => "Order allow,deny\nAllow from all\n",
            'mix/i/j/f.txt' => 'f',
            'more/.htaccess' => self::MORE,
            'more/t.php' => self::SCRIPT,
            'more/sub/index.html' => 'sub index',
            'more/off/.htaccess' => "RewriteEngine Off\n",
            'more/off/f.txt' => 'f',
            'more/before/.htaccess' => "RewriteOptions InheritBefore\nRewriteRule ^(.*)$ - [E=CHILD:$1]\n",
            'more/before/f.txt' => 'f',
            'more/noindex/.htaccess' => "Options -Indexes\n",
            'more/noindex/f.txt' => 'f',
            // A RewriteBase is the directory's own (Apache >= 2.4.4): a child's relative rules stay in the child.
            'base/.htaccess' => "RewriteEngine On\nRewriteBase /base/\nRewriteRule ^top$ t.php?top=1 [L]\n",
            'base/t.php' => self::SCRIPT,
            'base/dav/.htaccess' => "RewriteEngine On\nRewriteRule ^principals/(.*)$ caldav.php/$1 [L]\n",
            'base/dav/caldav.php' => self::SCRIPT,
            'base/merged/.htaccess' => "RewriteEngine On\nRewriteOptions MergeBase\nRewriteRule ^up$ t.php?merged=1 [L]\n",
            'base/merged/t.php' => self::SCRIPT,
            'mbase/.htaccess' => "RewriteEngine On\nRewriteOptions MergeBase\nRewriteBase /mbase/\n",
            'mbase/t.php' => self::SCRIPT,
            'mbase/sub/.htaccess' => "RewriteEngine On\nRewriteRule ^up$ t.php?merged=1 [L]\n",
            'mbase/sub/t.php' => self::SCRIPT,
        ];
    }

    /** @return list<string> */
    private static function targets(): array
    {
        return [
            '/wp/', '/wp/2024/05/hello-world/', '/wp/sample-page?x=1', '/wp/index.php', '/wp/index.php/a/b', '/wp/style.css',
            '/wp/wp-admin/', '/wp/wp-login.php?action=x', '/wp/wp-content/uploads/nope.jpg', '/wp/caf%C3%A9/',
            '/wiki/', '/wiki/start', '/wiki/wiki:syntax?do=edit', '/wiki/_media/wiki:logo.png?w=2', '/wiki/_detail/a.png',
            '/wiki/_export/raw/ns:page', '/wiki/index.php', '/wiki/lib/images/logo.png', '/wiki/lib/exe/xmlrpc.php',
            '/wiki/README', '/wiki/data/pages/start.txt', '/wiki/data/',
            '/flags/l1', '/flags/qsa?x=1', '/flags/qsd?x=1', '/flags/lone?x=1', '/flags/r301?q=1', '/flags/r302/a%20b',
            '/flags/ne/top', '/flags/esc/top', '/flags/f', '/flags/g', '/flags/loop', '/flags/end', '/flags/last',
            '/flags/NC', '/flags/item?id=42', '/flags/item?id=x', '/flags/back/one/two', '/flags/abs', '/flags/cond',
            '/flags/target.php',
            '/inherit/sub/c', '/inherit/sub/p', '/inherit/plain/target.php', '/inherit/target.php',
            '/access/secret.txt', '/access/open.txt', '/access/sub/secret.txt', '/access/compat/f.txt', '/access/compat2/f.txt',
            '/access/ip/f.txt', '/access/all/f.txt', '/access/match/a.log', '/access/match/a.txt',
            '/access/limit/f.txt', '/access/except/f.txt', '/access/none/f.txt', '/access/partial/f.txt', '/access/local/f.txt',
            '/wp', '/wiki', '/wiki/lib/exe/fetch.php/extra/path', '/wp/wp-admin',
            '/more/chain', '/more/skip', '/more/b/a&b', '/more/nob/a&b', '/more/dash?z=1', '/more/go?x=1&go=home',
            '/more/host', '/more/uri', '/more/req?x=1', '/more/sub', '/more/sub/', '/more/off/x', '/more/off/f.txt',
            '/more/before/f.txt', '/more/t.php',
            '/base/top', '/base/dav/principals/alice/', '/base/merged/up', '/mbase/sub/up',
            '/mix/a/f.txt', '/mix/b/c/f.txt', '/mix/d/e/f.txt', '/mix/g/h/f.txt', '/mix/i/j/f.txt',
        ];
    }

    public function testKilnEndsWhereApacheEnds(): void
    {
        if (!ApacheProcess::isInstalled()) {
            self::fail('Apache with mod_php is not installed (apt-get install apache2 libapache2-mod-php8.2): scripts/install-deps.sh installs it');
        }
        $root = PeerProcess::tempDir('kiln-htaccess-parity');
        try {
            foreach (self::site() as $path => $contents) {
                @mkdir(\dirname("$root/$path"), 0o755, true);
                file_put_contents("$root/$path", $contents);
            }
            $m = ApacheProcess::MODULES;
            $extra = "LoadModule access_compat_module $m/mod_access_compat.so\nLoadModule authz_host_module $m/mod_authz_host.so\n"
                . "LoadModule headers_module $m/mod_headers.so\nLoadModule env_module $m/mod_env.so\n"
                . "<Directory \"$root\">\n    AllowOverride All\n</Directory>\n";
            $apache = ApacheProcess::start($root, 2, $extra);
            $host = '127.0.0.1:' . $apache->port();
            $rules = new HtaccessRules($root);
            $resolver = new PathResolver($root);
            $mismatches = [];
            foreach (self::targets() as $target) {
                $response = HttpClient::get($apache->baseUrl() . $target, ['Authorization' => 'Basic YTpi']);
                $theirs = self::describeApache($response);
                $ours = self::describeKiln($rules, $resolver, $root, $target, $host);
                if ($theirs !== $ours) {
                    $mismatches[] = "$target\n  apache: $theirs\n  kiln:   $ours";
                }
            }
            $apache->stop();
            self::assertSame([], $mismatches, implode("\n", $mismatches));
            self::assertSame([], array_map('strval', $rules->takeWarnings()));
        } finally {
            PeerProcess::removeDir($root);
        }
    }

    /** @param array{status: int, headers: array<string, string>, body: string} $response */
    private static function describeApache(array $response): string
    {
        $status = $response['status'];
        if ($status >= 300 && $status < 400) {
            return "redirect $status " . ($response['headers']['location'] ?? '');
        }
        if ($status !== 200) {
            return "status $status";
        }
        return str_starts_with($response['body'], 'script ') ? rtrim($response['body']) : 'file ' . $response['body'];
    }

    private static function describeKiln(HtaccessRules $rules, PathResolver $resolver, string $root, string $target, string $host): string
    {
        [$path, $query] = explode('?', $target, 2) + [1 => ''];
        $outcome = $rules->forRequest(new RequestFacts('GET', $path, $query, ['host' => $host, 'authorization' => 'Basic YTpi'], '127.0.0.1'));
        if ($outcome->verdict === Verdict::Redirect) {
            return "redirect {$outcome->status} {$outcome->location}";
        }
        if ($outcome->verdict === Verdict::Refuse) {
            return "status {$outcome->status}";
        }
        $resolved = $resolver->resolve($outcome->path, $outcome->query);
        if ($resolved instanceof Refusal) {
            return "status {$resolved->status}";
        }
        if ($resolved instanceof Redirect) {
            return "redirect {$resolved->status} http://$host{$resolved->location}";
        }
        if ($resolved instanceof Script) {
            if ($resolved->scriptName !== rawurldecode($outcome->path)) {
                $target = $rules->forTarget(new RequestFacts('GET', $path, $query, ['host' => $host], '127.0.0.1'), $resolved->scriptName, $outcome->env);
                if ($target->verdict === Verdict::Refuse) {
                    return "status {$target->status}";
                }
            }
            $env = [];
            foreach (['SEEN', 'PARENT', 'CHILD', 'HTTP_AUTHORIZATION', 'REDIRECT_URL', 'REDIRECT_SEEN', 'REDIRECT_PARENT'] as $name) {
                $value = $outcome->env[$name] ?? null; // mod_php hides the Authorization header itself
                if ($value !== null) {
                    $env[] = "$name=$value";
                }
            }
            return rtrim("script {$resolved->scriptName} {$resolved->pathInfo} ?{$outcome->query} " . implode(',', $env));
        }
        return 'file ' . (string) file_get_contents($resolved->realPath);
    }
}
