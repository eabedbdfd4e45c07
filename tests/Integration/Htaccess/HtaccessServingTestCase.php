<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Htaccess;

use Kiln\Tests\Support\HttpClient;
use Kiln\Tests\Support\KilnProcess;
use Kiln\Tests\Support\PeerProcess;
use PHPUnit\Framework\TestCase;

/**
 * `kiln serve DOCROOT` on a real socket, with the .htaccess files apps ship: WordPress's stock file at the
 * root, DokuWiki's locked directory, a redirect, headers, an ErrorDocument, an unsupported directive. The
 * front controller is off, so what routes pretty URLs is the .htaccess file. One server per class (one
 * worker, so "logged once" is one line), for the tier a subclass names.
 */
abstract class HtaccessServingTestCase extends TestCase
{
    private static string $root = '';

    private static ?KilnProcess $server = null;

    /** `sequential` or `isolated` */
    abstract protected static function tier(): string;

    public static function setUpBeforeClass(): void
    {
        self::$root = sys_get_temp_dir() . '/kiln-htaccess-' . bin2hex(random_bytes(4));
        foreach (self::site() as $path => $contents) {
            @mkdir(\dirname(self::$root . "/$path"), 0o755, true);
            file_put_contents(self::$root . "/$path", $contents);
        }
        self::$server = self::start();
    }

    public static function tearDownAfterClass(): void
    {
        self::$server?->stop();
        self::$server = null;
        PeerProcess::removeDir(self::$root);
    }

    public function testPrettyPermalinksReachIndexPhpWithTheOriginalRequestUri(): void
    {
        $response = $this->get('/2024/hello-world/?p=7&x=a%20b');
        self::assertSame(200, $response['status'], $response['body']);
        $seen = self::json($response);
        self::assertSame('/index.php', $seen['script']);
        self::assertSame('/2024/hello-world/?p=7&x=a%20b', $seen['uri']);
        self::assertSame('p=7&x=a%20b', $seen['query']);
        self::assertSame(['p' => '7', 'x' => 'a b'], $seen['get']);
        self::assertSame('/2024/hello-world/', $seen['redirect_url'], 'REDIRECT_URL, as after an Apache internal rewrite');
    }

    public function testARewriteToAScriptWithPathInfoRunsItWithThatPathInfo(): void
    {
        foreach (['/dav/principals/users/alice/calendar/' => '/alice/calendar/', '/dav/.well-known/caldav' => '/.well-known/caldav'] as $target => $pathInfo) {
            $response = $this->get($target);
            self::assertSame(200, $response['status'], "$target: {$response['body']}");
            self::assertSame(['script' => '/dav/caldav.php', 'path_info' => $pathInfo, 'self' => "/dav/caldav.php$pathInfo", 'uri' => $target], self::json($response));
        }
    }

    public function testExistingFilesAndDirectoriesAreServedDirectly(): void
    {
        $file = $this->get('/readme.txt');
        self::assertSame(200, $file['status']);
        self::assertSame("a static file\n", $file['body']);
        $admin = $this->get('/wp-admin/');
        self::assertSame(200, $admin['status']);
        self::assertSame('wp-admin index', $admin['body']);
        $slash = $this->get('/wp-admin?x=1');
        self::assertSame(301, $slash['status']);
        self::assertSame('/wp-admin/?x=1', $slash['headers']['location']);
    }

    public function testADirectoryWithRequireAllDeniedIsRefused(): void
    {
        foreach (['/data/conf/local.php', '/data/pages/start.txt', '/data/', '/data/missing'] as $path) {
            self::assertSame(403, $this->get($path)['status'], $path);
        }
        self::assertSame(200, $this->get('/readme.txt')['status'], 'the rest of the site is not');
    }

    public function testARewriteRuleRedirectsWithTheQueryAppended(): void
    {
        $response = $this->get('/old/page/42?ref=mail');
        self::assertSame(301, $response['status']);
        self::assertSame(self::$server?->baseUrl() . '/new.php?id=42&ref=mail', $response['headers']['location']);
    }

    public function testARewrittenQueryStringReachesTheScript(): void
    {
        $seen = self::json($this->get('/old/item/5?ref=mail'));
        self::assertSame('/index.php', $seen['script']);
        self::assertSame('item=5&ref=mail', $seen['query']);
        self::assertSame(['item' => '5', 'ref' => 'mail'], $seen['get']);
        self::assertSame('/old/item/5?ref=mail', $seen['uri']);
    }

    public function testHeaderSetAppliesToAStaticFileAndHeaderAlwaysToErrorsToo(): void
    {
        $file = $this->get('/assets/app.css');
        self::assertSame(200, $file['status']);
        self::assertSame('static', $file['headers']['x-site'] ?? null);
        self::assertSame('yes', $file['headers']['x-always'] ?? null);
        self::assertStringStartsWith('max-age=', $file['headers']['cache-control'] ?? '', 'ExpiresByType text/css');
        $missing = $this->get('/assets/missing.css');
        self::assertSame(404, $missing['status']);
        self::assertArrayNotHasKey('x-site', $missing['headers']);
        self::assertSame('yes', $missing['headers']['x-always'] ?? null);
    }

    /**
     * A script that ends with exit() or registers a shutdown function ends its worker on the sequential tier,
     * whose response then leaves as the process ends: the headers .htaccess adds must be on it as well.
     */
    public function testHeaderSetAppliesToAScriptThatExitsOrRegistersAShutdownFunction(): void
    {
        foreach (['/headers/page.php', '/headers/exit.php', '/headers/shutdown.php'] as $target) {
            $response = $this->get($target);
            self::assertSame([200, 'x'], [$response['status'], $response['body']], $target);
            self::assertSame('noindex, nofollow', $response['headers']['x-robots-tag'] ?? null, $target);
            self::assertSame('yes', $response['headers']['x-always'] ?? null, $target);
        }
    }

    public function testErrorDocumentIsServedKeepingTheStatus(): void
    {
        $response = $this->get('/errors/nowhere?q=1');
        self::assertSame(404, $response['status']);
        self::assertSame('custom 404 for /errors/nowhere (q=1)', $response['body']);
    }

    public function testAnUnsupportedDirectiveIsLoggedOnce(): void
    {
        $server = self::$server;
        self::assertNotNull($server);
        for ($i = 0; $i < 3; $i++) {
            self::assertSame(200, $this->get('/legacy/page.txt')['status']);
        }
        $server->waitForLog('~legacy/\.htaccess:2: AddHandler: ~', 5.0);
        self::assertSame(1, substr_count($server->log(), 'AddHandler'), $server->log());
    }

    public function testNoHtaccessTurnsItAllOff(): void
    {
        $server = self::start(['--no-htaccess']);
        try {
            $base = $server->baseUrl();
            self::assertSame(404, HttpClient::get("$base/2024/hello-world/")['status'], 'no pretty permalinks: the front controller is off');
            self::assertSame(200, HttpClient::get("$base/data/pages/start.txt")['status']);
            self::assertArrayNotHasKey('x-site', HttpClient::get("$base/assets/app.css")['headers']);
            self::assertSame(404, HttpClient::get("$base/old/page/42")['status']);
        } finally {
            $server->stop();
        }
        self::assertStringNotContainsString('AddHandler', $server->log());
    }

    public function testKilnNoHtaccessInTheEnvironmentTurnsItOffToo(): void
    {
        $server = self::start([], ['KILN_NO_HTACCESS' => '1']);
        try {
            self::assertSame(200, HttpClient::get($server->baseUrl() . '/data/pages/start.txt')['status']);
        } finally {
            $server->stop();
        }
    }

    /**
     * @param list<string> $args
     * @param array<string, string> $env
     */
    private static function start(array $args = [], array $env = []): KilnProcess
    {
        return KilnProcess::start(self::$root, ['--tier=' . static::tier(), '--workers=1', '--pool-size=1', '--front-controller=off', ...$args], $env);
    }

    protected static function server(): KilnProcess
    {
        self::assertNotNull(self::$server);
        return self::$server;
    }

    /** @return array{status: int, headers: array<string, string>, body: string} */
    protected function get(string $target): array
    {
        self::assertNotNull(self::$server);
        return HttpClient::get(self::$server->baseUrl() . $target, [], 10.0);
    }

    /**
     * @param array{body: string} $response
     * @return array<string, mixed>
     */
    private static function json(array $response): array
    {
        $data = json_decode($response['body'], true);
        self::assertIsArray($data, 'not JSON: ' . $response['body']);
        /** @var array<string, mixed> $data */
        return $data;
    }

    /** @return array<string, string> path under the root => contents */
    private static function site(): array
    {
        return [
            // WordPress 6's stock file, as written by Settings → Permalinks.
            '.htaccess' => "# BEGIN WordPress\n\n<IfModule mod_rewrite.c>\nRewriteEngine On\n"
                . "RewriteRule .* - [E=HTTP_AUTHORIZATION:%{HTTP:Authorization}]\nRewriteBase /\n"
                . "RewriteRule ^index\\.php$ - [L]\nRewriteCond %{REQUEST_FILENAME} !-f\n"
                . "RewriteCond %{REQUEST_FILENAME} !-d\nRewriteRule . /index.php [L]\n</IfModule>\n\n# END WordPress\n",
            'index.php' => '<?php header("Content-Type: application/json"); echo json_encode(["script" => $_SERVER["SCRIPT_NAME"], '
                . '"uri" => $_SERVER["REQUEST_URI"], "query" => $_SERVER["QUERY_STRING"], "get" => $_GET, '
                . '"redirect_url" => $_SERVER["REDIRECT_URL"] ?? null]);',
            'readme.txt' => "a static file\n",
            'wp-admin/index.php' => '<?php echo "wp-admin index";',
            // DokuWiki's data/.htaccess.
            'data/.htaccess' => "## no access to the data directory\n<IfModule mod_authz_core.c>\n    Require all denied\n</IfModule>\n"
                . "<IfModule !mod_authz_core.c>\n    Order allow,deny\n    Deny from all\n</IfModule>\n",
            'data/conf/local.php' => '<?php $conf["title"] = "secret";',
            'data/pages/start.txt' => "====== start ======\n",
            'old/.htaccess' => "RewriteEngine On\nRewriteRule ^page/(\\d+)$ /new.php?id=$1 [R=301,QSA,L]\n"
                . "RewriteRule ^item/(\\d+)$ /index.php?item=$1 [QSA,L]\n",
            'assets/.htaccess' => "RewriteEngine Off\nHeader set X-Site static\nHeader always set X-Always yes\n"
                . "ExpiresActive On\nExpiresByType text/css \"access plus 1 week\"\n",
            'assets/app.css' => "body { color: red }\n",
            'headers/.htaccess' => "RewriteEngine Off\nHeader set X-Robots-Tag \"noindex, nofollow\"\nHeader always set X-Always yes\n",
            'headers/page.php' => '<?php echo "x";',
            'headers/exit.php' => '<?php echo "x"; exit;',
            'headers/shutdown.php' => '<?php register_shutdown_function(function () {}); echo "x";',
            'errors/.htaccess' => "RewriteEngine Off\nErrorDocument 404 /404.php\n",
            '404.php' => '<?php echo "custom {$_SERVER["REDIRECT_STATUS"]} for {$_SERVER["REDIRECT_URL"]} ({$_SERVER["REDIRECT_QUERY_STRING"]})";',
            // A CalDAV server's rewrites (DAViCal's): pretty paths to one script, the rest as its PATH_INFO.
            'dav/.htaccess' => "RewriteEngine On\nRewriteRule ^\\.well-known/(.*)$ /dav/caldav.php/.well-known/$1 [NC,L]\n"
                . "RewriteRule ^principals/users/(.*)$ /dav/caldav.php/$1 [NC,L]\n",
            'dav/caldav.php' => '<?php header("Content-Type: application/json"); echo json_encode(["script" => $_SERVER["SCRIPT_NAME"], '
                . '"path_info" => $_SERVER["PATH_INFO"] ?? null, "self" => $_SERVER["PHP_SELF"], "uri" => $_SERVER["REQUEST_URI"]]);',
            'legacy/.htaccess' => "RewriteEngine Off\nAddHandler cgi-script .cgi\n",
            'legacy/page.txt' => "legacy\n",
            'ini/.htaccess' => "php_value precision 5\n",
            'ini/show.php' => '<?php echo ini_get("precision");',
            'precision.php' => '<?php echo ini_get("precision");',
            'zone/.htaccess' => "php_value date.timezone \"Europe/Paris\"\n",
            'zone/show.php' => '<?php echo date_default_timezone_get();',
            'set-zone.php' => '<?php date_default_timezone_set("America/New_York"); echo date_default_timezone_get();',
            'show-zone.php' => '<?php echo date_default_timezone_get();',
        ];
    }
}
