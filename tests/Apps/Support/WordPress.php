<?php

declare(strict_types=1);

namespace Kiln\Tests\Apps\Support;

use Kiln\Tests\Support\MariaDbServer;

/**
 * Debian's `wordpress` (6.1) served from a throwaway copy of /usr/share/wordpress with a wp-config.php the test
 * writes (Debian's own picks /etc/wordpress/config-HOST.php by HTTP_HOST; the copy replaces it so that nothing
 * under /etc is touched), its own database, and the flow a new site owner walks through.
 */
final class WordPress
{
    public const SOURCE = '/usr/share/wordpress';
    public const DB_PASSWORD = 'wp-db-secret-5e1d0c';
    public const ADMIN = 'kilnadmin';
    public const ADMIN_PASSWORD = 'Kiln-admin-pass-9041';
    public const TITLE = 'Hello from Kiln';
    public const SLUG = 'hello-from-kiln';

    public static function isInstalled(): bool
    {
        return is_file(self::SOURCE . '/wp-settings.php') && is_dir(self::SOURCE . '/wp-content/themes/twentytwentythree');
    }

    /**
     * A wp-config.php for a copy: the database, fresh keys and salts, no debug output and no updates.
     * $extra is PHP put in before wp-settings.php is loaded (the benchmark's URL and cron settings).
     */
    public static function config(string $comment, string $database, string $password, string $host, string $extra = ''): string
    {
        $keys = '';
        foreach (['AUTH_KEY', 'SECURE_AUTH_KEY', 'LOGGED_IN_KEY', 'NONCE_KEY', 'AUTH_SALT', 'SECURE_AUTH_SALT', 'LOGGED_IN_SALT', 'NONCE_SALT'] as $key) {
            $keys .= "define('$key', '" . bin2hex(random_bytes(24)) . "');\n";
        }
        return <<<PHP
            <?php
            // $comment
            define('DB_NAME', '$database');
            define('DB_USER', '$database');
            define('DB_PASSWORD', '$password');
            define('DB_HOST', '$host');
            define('DB_CHARSET', 'utf8mb4');
            define('DB_COLLATE', '');
            $keys
            \$table_prefix = 'wp_';
            define('WP_DEBUG', false);
            define('WP_AUTO_UPDATE_CORE', false);
            define('AUTOMATIC_UPDATER_DISABLED', true);
            define('FS_METHOD', 'direct');
            $extra
            if (!defined('ABSPATH')) {
                define('ABSPATH', __DIR__ . '/');
            }
            require_once ABSPATH . 'wp-settings.php';

            PHP;
    }

    public static function prepare(MariaDbServer $db, string $stack): SiteCopy
    {
        $name = 'wp_' . preg_replace('/\W/', '_', $stack);
        $db->createDatabase($name, $name, self::DB_PASSWORD);
        $copy = SiteCopy::of(self::SOURCE, 'kiln-apps-wordpress');
        $copy->write('wp-config.php', self::config(
            'Written by tests/Apps/Support/WordPress.php for a throwaway copy of Debian\'s /usr/share/wordpress.',
            $name,
            self::DB_PASSWORD,
            $db->host() . ':' . $db->port(),
        ));
        // What an administrator's editor or a careless deploy leaves behind: never to be served.
        $secret = "<?php define('DB_PASSWORD', '" . self::DB_PASSWORD . "');\n";
        foreach (['wp-config.php~', 'wp-config.php.bak', 'wp-config.php.orig', '.git/config'] as $leftover) {
            $copy->write($leftover, $leftover === '.git/config' ? "[remote \"origin\"]\n\turl = https://deploy:" . self::DB_PASSWORD . "@git.example/site\n" : $secret);
        }
        @mkdir($copy->root() . '/wp-content/uploads', 0o755);
        $copy->handToWebServer();
        return $copy;
    }

    public static function flow(Run $run, Browser $admin, Browser $visitor, MariaDbServer $db, string $stack): void
    {
        $base = $admin->baseUrl();
        $run->expect('front page sends to the installer', $admin->get('/'), 302, ['Location: /wp-admin/install.php']);
        $run->expect('installer form', $admin->get('/wp-admin/install.php?step=1'), 200, ['name="weblog_title"']);
        $run->expect('installer runs', $admin->post('/wp-admin/install.php?step=2', ['weblog_title' => 'Kiln Apps Test',
            'user_name' => self::ADMIN, 'admin_password' => self::ADMIN_PASSWORD, 'admin_password2' => self::ADMIN_PASSWORD,
            'pw_weak' => 'on', 'admin_email' => 'admin@example.com', 'blog_public' => '0', 'language' => '',
            'Submit' => 'Install WordPress']), 200, ['Success!', self::ADMIN]);
        $run->expect('login form', $admin->get('/wp-login.php'), 200, ['name="log"']);
        $run->expect('login', $admin->post('/wp-login.php', ['log' => self::ADMIN, 'pwd' => self::ADMIN_PASSWORD,
            'wp-submit' => 'Log In', 'redirect_to' => "$base/wp-admin/", 'testcookie' => '1']), 302, ['Location: /wp-admin/']);
        $run->expect('dashboard', $admin->get('/wp-admin/'), 200, ['Dashboard', 'id="dashboard-widgets"']);
        $nonce = trim($run->expect('REST nonce', $admin->get('/wp-admin/admin-ajax.php?action=rest-nonce'), 200)->body);
        $rest = ['X-WP-Nonce' => $nonce];
        $category = $run->expect('create a category (REST)', $admin->post('/?rest_route=/wp/v2/categories', ['name' => 'Kiln Tests'], [], $rest), 201, ['"slug":"kiln-tests"'])->json();
        $png = self::png();
        $media = $run->expect('upload an image (REST, multipart)', $admin->post(
            '/?rest_route=/wp/v2/media',
            ['title' => 'Kiln test image'],
            ['file' => ['filename' => 'kiln-test.png', 'type' => 'image/png', 'content' => $png]],
            $rest,
        ), 201, ['"mime_type":"image\/png"'])->json();
        $imageUrl = \is_string($media['source_url'] ?? null) ? $media['source_url'] : '/wp-content/uploads/missing.png';
        $image = $admin->get((string) parse_url($imageUrl, PHP_URL_PATH));
        $run->expect('uploaded image is served', $image, 200);
        $run->assert(
            'uploaded image is the same bytes',
            $image->body === $png && str_starts_with($image->header('content-type'), 'image/png'),
            'got ' . \strlen($image->body) . ' bytes of ' . $image->header('content-type') . ', sent ' . \strlen($png),
        );
        $post = $run->expect('publish a post with category and image (REST)', $admin->post('/?rest_route=/wp/v2/posts', [
            'title' => self::TITLE, 'status' => 'publish', 'categories' => [self::text($category['id'] ?? 0)],
            'featured_media' => self::text($media['id'] ?? 0),
            'content' => "<!-- wp:paragraph --><p>Kiln body text.</p><!-- /wp:paragraph --><!-- wp:image --><figure class=\"wp-block-image\"><img src=\"$imageUrl\" alt=\"\"/></figure><!-- /wp:image -->",
        ], [], $rest), 201, ['"slug":"' . self::SLUG . '"'])->json();
        $form = $run->expect('permalink settings form', $admin->get('/wp-admin/options-permalink.php'), 200, ['permalink_structure']);
        $run->expect('save pretty permalinks /%postname%/', $admin->post('/wp-admin/options-permalink.php', [
            '_wpnonce' => $form->input('_wpnonce'), '_wp_http_referer' => '/wp-admin/options-permalink.php',
            'selection' => '/%postname%/', 'permalink_structure' => '/%postname%/', 'category_base' => '', 'tag_base' => '',
            'submit' => 'Save Changes']), 302, ['Location: options-permalink.php?settings-updated=true']);
        $run->expect('permalink settings saved (rules flushed)', $admin->get('/wp-admin/options-permalink.php?settings-updated=true'), 200, ['Permalink structure updated']);
        $stored = $db->query('wp_' . preg_replace('/\W/', '_', $stack), "SELECT option_value FROM wp_options WHERE option_name = 'permalink_structure'");
        $structure = self::text($stored[0]['option_value'] ?? '(none)');
        $run->assert('permalink structure stored as /%postname%/', $structure === '/%postname%/', "WordPress stored \"$structure\"");
        $slug = '/' . self::SLUG . '/';
        $run->expect(
            'post under its pretty permalink',
            $visitor->get($slug),
            200,
            [self::TITLE, 'Kiln body text.', 'Kiln Tests', 'kiln-test', 'comment_post_ID', 'wp-comments-post.php'],
        );
        $run->expect('visitor posts a comment', $visitor->post('/wp-comments-post.php', ['comment' => 'Nice post, Kiln!',
            'author' => 'Visitor', 'email' => 'visitor@example.com', 'url' => '', 'submit' => 'Post Comment',
            'comment_post_ID' => self::text($post['id'] ?? 0), 'comment_parent' => '0']), 302, ['Location: #comment-']);
        $run->expect('comment awaits moderation in wp-admin', $admin->get('/wp-admin/edit-comments.php'), 200, ['Nice post, Kiln!', 'Visitor']);
        $feed = $run->expect('RSS feed /feed/', $visitor->get('/feed/'), 200, ['<rss', self::TITLE]);
        $run->assert('RSS feed content type', str_contains($feed->header('content-type'), 'rss+xml'), 'Content-Type: ' . $feed->header('content-type'));
        $run->expect('REST API /wp-json/wp/v2/posts', $visitor->get('/wp-json/wp/v2/posts'), 200, [self::TITLE, '"link":"' . str_replace('/', '\/', $base . $slug) . '"']);
        $run->expect('category archive /category/kiln-tests/', $visitor->get('/category/kiln-tests/'), 200, [self::TITLE]);
        $confirm = $run->expect('log out asks to confirm', $admin->get('/wp-login.php?action=logout'), 403, ['action=logout']);
        $logout = $confirm->match('~(wp-login\.php\?action=logout&(?:amp;)?_wpnonce=[0-9a-f]+)~');
        $run->expect('log out', $admin->get('/' . $logout), 302, ['Location: wp-login.php?loggedout=true']);
        $run->expect('wp-admin after logout asks to log in', $admin->get('/wp-admin/'), 302, ['Location: /wp-login.php']);
        self::accessChecks($run, $visitor);
    }

    private static function accessChecks(Run $run, Browser $visitor): void
    {
        $secrets = [self::DB_PASSWORD];
        $run->expect('GET /wp-config.php runs it, shows no secret', $visitor->get('/wp-config.php'), 200, [], $secrets);
        $run->refused('refuses /.htaccess', $visitor->get('/.htaccess'), ['RewriteRule', 'Configuration for a single blog'], true);
        foreach (['/wp-config.php~', '/wp-config.php.bak', '/wp-config.php.orig', '/.git/config'] as $path) {
            $run->refused("refuses $path", $visitor->get($path), $secrets, false);
        }
    }

    private static function text(mixed $value): string
    {
        return \is_scalar($value) ? (string) $value : '';
    }

    /** A small real PNG (GD), so that WordPress reads its size and makes no thumbnails fail. */
    private static function png(): string
    {
        $image = imagecreatetruecolor(40, 30);
        imagefilledrectangle($image, 0, 0, 39, 29, (int) imagecolorallocate($image, 200, 80, 20));
        ob_start();
        imagepng($image);
        return (string) ob_get_clean();
    }
}
