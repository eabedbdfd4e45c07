<?php

declare(strict_types=1);

/*
 * The site of `bench/run wordpress`: a throwaway MariaDB and ONE copy of Debian's WordPress, installed through its
 * own installer, with one published post and pretty permalinks, that every stack of the run serves.
 *
 *   php bench/wordpress/prepare.php DIR
 *
 * Everything it makes lives under DIR (it is the TMPDIR of the MariaDB datadir and of the copy). The code of the
 * application tests does the work (tests/Apps/Support: SiteCopy, Browser; tests/Support: MariaDbServer, PeerProcess).
 * The installer runs over HTTP on a `php -S` started for the purpose and stopped right after.
 *
 * Prints `key=value` lines (site, db_port, db_pid, title), then `ready`, and stays up holding the database: MariaDB
 * is a child of this process and is stopped by PID (TERM, then KILL) when this process gets TERM or INT. A failure
 * prints `error=...` and exits 1, with the database stopped.
 */

use Kiln\Tests\Apps\Support\Browser;
use Kiln\Tests\Apps\Support\Page;
use Kiln\Tests\Apps\Support\SiteCopy;
use Kiln\Tests\Apps\Support\WordPress;
use Kiln\Tests\Support\MariaDbServer;
use Kiln\Tests\Support\PeerProcess;

require __DIR__ . '/../lib/autoload.php';
require __DIR__ . '/../lib/prepared.php';

const BENCH_WP_DB = 'wp_bench';
const BENCH_WP_TITLE = 'Kiln benchmark post';
const BENCH_WP_BODY = 'A paragraph of text, so that the front page lists a real post: its title, its body, its date and its author.';

/** Fails the preparation unless the page has the status and, when given, the text. */
function bench_wp_expect(string $step, Page $page, int $status, string $needle = ''): Page
{
    if ($page->status !== $status || ($needle !== '' && !str_contains($page->body . implode("\n", array_merge(...array_values($page->headers))), $needle))) {
        throw new RuntimeException("$step: expected $status" . ($needle !== '' ? " with \"$needle\"" : '') . ', got ' . $page->summary());
    }
    return $page;
}

/** The copy's wp-config.php: served by several stacks on several ports, so the site's URL follows the request. */
function bench_wp_config(string $password, string $host): string
{
    return WordPress::config(
        'Written by bench/wordpress/prepare.php. The same copy is served by several stacks on several ports, so the site\'s URL follows the request\'s host and port (no canonical redirect to another port).',
        BENCH_WP_DB,
        $password,
        $host,
        <<<'PHP'
            // The port comes from SERVER_PORT: Debian's nginx passes HTTP_HOST as $host, without it.
            $bench_host = preg_match('/^[\w.-]+/', $_SERVER['HTTP_HOST'] ?? '', $m) === 1 ? $m[0] : '127.0.0.1';
            $bench_port = (int) ($_SERVER['SERVER_PORT'] ?? 80);
            define('WP_HOME', 'http://' . $bench_host . ($bench_port !== 80 ? ':' . $bench_port : ''));
            define('WP_SITEURL', WP_HOME);
            define('DISABLE_WP_CRON', true);
            PHP,
    );
}

/** Install, log in, publish the post, switch to /%postname%/ permalinks: what a new site owner does first. */
function bench_wp_install(string $base): void
{
    $admin = new Browser($base);
    bench_wp_expect('installer form', $admin->get('/wp-admin/install.php?step=1'), 200, 'name="weblog_title"');
    bench_wp_expect('installer runs', $admin->post('/wp-admin/install.php?step=2', ['weblog_title' => 'Kiln Bench',
        'user_name' => WordPress::ADMIN, 'admin_password' => WordPress::ADMIN_PASSWORD,
        'admin_password2' => WordPress::ADMIN_PASSWORD, 'pw_weak' => 'on', 'admin_email' => 'admin@example.com',
        'blog_public' => '0', 'language' => '', 'Submit' => 'Install WordPress']), 200, 'Success!');
    bench_wp_expect('login form', $admin->get('/wp-login.php'), 200, 'name="log"');
    bench_wp_expect('login', $admin->post('/wp-login.php', ['log' => WordPress::ADMIN, 'pwd' => WordPress::ADMIN_PASSWORD,
        'wp-submit' => 'Log In', 'redirect_to' => "$base/wp-admin/", 'testcookie' => '1']), 302);
    $nonce = trim(bench_wp_expect('REST nonce', $admin->get('/wp-admin/admin-ajax.php?action=rest-nonce'), 200)->body);
    $post = ['title' => BENCH_WP_TITLE, 'status' => 'publish',
        'content' => '<!-- wp:paragraph --><p>' . BENCH_WP_BODY . '</p><!-- /wp:paragraph -->'];
    bench_wp_expect('publish the post (REST)', $admin->post('/?rest_route=/wp/v2/posts', $post, [], ['X-WP-Nonce' => $nonce]), 201);
    $form = bench_wp_expect('permalink settings form', $admin->get('/wp-admin/options-permalink.php'), 200, 'permalink_structure');
    bench_wp_expect('save pretty permalinks', $admin->post('/wp-admin/options-permalink.php', [
        '_wpnonce' => $form->input('_wpnonce'), '_wp_http_referer' => '/wp-admin/options-permalink.php',
        'selection' => '/%postname%/', 'permalink_structure' => '/%postname%/', 'category_base' => '', 'tag_base' => '',
        'submit' => 'Save Changes']), 302, 'settings-updated=true');
    bench_wp_expect('front page lists the post', (new Browser($base))->get('/'), 200, BENCH_WP_TITLE);
}

/** @return array{MariaDbServer, array<string, string>} the database (this process holds it) and what to print */
function bench_wp_prepare(string $dir): array
{
    $db = MariaDbServer::start();
    try {
        $password = bin2hex(random_bytes(12));
        $db->createDatabase(BENCH_WP_DB, BENCH_WP_DB, $password);
        $copy = SiteCopy::of(WordPress::SOURCE, 'wordpress');
        $copy->write('wp-config.php', bench_wp_config($password, $db->host() . ':' . $db->port()));
        // What WordPress writes itself when it can (it cannot here: the installer does not run under Apache).
        $copy->write('.htaccess', "# BEGIN WordPress\n<IfModule mod_rewrite.c>\nRewriteEngine On\nRewriteBase /\n"
            . "RewriteRule ^index\\.php$ - [L]\nRewriteCond %{REQUEST_FILENAME} !-f\nRewriteCond %{REQUEST_FILENAME} !-d\n"
            . "RewriteRule . /index.php [L]\n</IfModule>\n# END WordPress\n");
        $copy->write('bench-opcache-status.php', (string) file_get_contents(__DIR__ . '/../www/opcache-status.php'));
        @mkdir($copy->root() . '/wp-content/uploads', 0o755);
        $port = PeerProcess::freePort();
        $server = PeerProcess::launch('php -S', [PHP_BINARY, '-S', "127.0.0.1:$port", '-t', $copy->root()], "$dir/installer-php-s.log");
        try {
            $server->waitUntil(fn(): bool => PeerProcess::answersHttp($port), 10.0, "php -S answered on $port", fn(): string => PeerProcess::tail("$dir/installer-php-s.log"));
            bench_wp_install("http://127.0.0.1:$port");
        } finally {
            $server->stop();
        }
        $copy->handToWebServer();
        exec('chmod -R a+rX ' . escapeshellarg($copy->root()));
    } catch (Throwable $e) {
        $db->stop();
        throw $e;
    }
    $pid = trim((string) @file_get_contents(dirname($db->socket()) . '/mysqld.pid'));
    return [$db, ['site' => $copy->root(), 'db_port' => (string) $db->port(), 'db_pid' => $pid, 'title' => BENCH_WP_TITLE]];
}

$dir = realpath($argv[1] ?? '');
if ($dir === false || !is_dir($dir)) {
    fwrite(STDERR, "usage: php bench/wordpress/prepare.php DIR (an existing directory)\n");
    exit(2);
}
putenv("TMPDIR=$dir"); // PeerProcess::tempDir() goes through sys_get_temp_dir(), which reads TMPDIR on first use
benchHoldPrepared(static function () use ($dir): array {
    [$db, $info] = bench_wp_prepare($dir);

    return [$info, $db->stop(...)];
});
