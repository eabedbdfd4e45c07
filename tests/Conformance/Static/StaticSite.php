<?php

declare(strict_types=1);

namespace Kiln\Tests\Conformance\Static;

/**
 * A document root built for the static-file conformance tests, in a fresh temp directory:
 *
 *     DIR/outside/          secret.txt, secret.js.gz (never reachable)
 *     DIR/root/             the document root: text, binary, compressible, precompressed, empty files,
 *                           sub/ with an index, noindex/ without, dotfiles, PHP sources, symlinks in and out
 */
final class StaticSite
{
    public readonly string $dir;

    public readonly string $root;

    private function __construct()
    {
        $this->dir = sys_get_temp_dir() . '/kiln-static-' . bin2hex(random_bytes(6));
        $this->root = $this->dir . '/root';
    }

    public static function create(): self
    {
        $site = new self();
        $site->build();
        return $site;
    }

    /** Deterministic bytes of any length (every byte value occurs). */
    public static function bytes(int $length, string $seed = 'kiln'): string
    {
        $out = '';
        for ($i = 0; \strlen($out) < $length; $i++) {
            $out .= md5("$seed-$i", true);
        }
        return substr($out, 0, $length);
    }

    /** Compressible text of any length. */
    public static function text(int $length): string
    {
        $out = '';
        for ($i = 0; \strlen($out) < $length; $i++) {
            $out .= ".rule-$i { color: #" . substr(md5((string) $i), 0, 6) . "; }\n";
        }
        return substr($out, 0, $length);
    }

    public function path(string $relative): string
    {
        return $this->root . '/' . ltrim($relative, '/');
    }

    /** Writes a file, modified an hour ago unless told (so "modified since" dates can be after it). */
    public function put(string $relative, string $content, ?int $mtime = null): void
    {
        $path = $this->path($relative);
        if (!is_dir(\dirname($path))) {
            mkdir(\dirname($path), 0777, true);
        }
        file_put_contents($path, $content);
        touch($path, $mtime ?? time() - 3600);
        clearstatcache();
    }

    public function remove(): void
    {
        self::removeTree($this->dir);
    }

    private function build(): void
    {
        mkdir($this->root, 0777, true);
        mkdir($this->dir . '/outside');
        file_put_contents($this->dir . '/outside/secret.txt', "SECRET outside the root\n");
        file_put_contents($this->dir . '/outside/secret.js.gz', (string) gzencode("SECRET outside the root\n"));

        $this->put('index.html', "<h1>index</h1>\n");
        $this->put('hello.txt', "Hello, world!\n");
        $this->put('data.bin', self::bytes(100_000));
        $this->put('empty.txt', '');
        $this->put('style.css', self::text(20_000));
        $this->put('small.css', self::text(500));
        $this->put('app.js', self::text(8000));
        $this->put('app.js.gz', (string) gzencode(self::text(8000), 9));
        $this->put('app.js.br', 'BROTLI:' . self::bytes(300, 'br')); // never decoded by the server: any bytes do
        $this->put('only-br.json', self::text(3000));
        $this->put('only-br.json.br', 'BROTLI-JSON:' . self::bytes(200, 'brj'));
        $this->put('data.json', '{"a":1}');
        $this->put('logo.svg', '<svg xmlns="http://www.w3.org/2000/svg"/>');
        $this->put('photo.png', "\x89PNG\r\n\x1a\n" . self::bytes(3000, 'png'));
        $this->put('font.woff2', self::bytes(2000, 'woff2'));
        $this->put('unknown.xyz', 'who knows');
        $this->put('archive.tar.gz', (string) gzencode('tar bytes'));
        $this->put('a b/c d.txt', "spaces\n");
        $this->put('%2e%2e/literal.txt', "a directory named %2e%2e\n");
        $this->put('sub/index.html', "<p>sub index</p>\n");
        $this->put('sub/page.html', "<p>sub page</p>\n");
        mkdir($this->path('noindex'));
        $this->put('noindex/file.txt', "in noindex\n");
        $this->put('.env', "DB_PASSWORD=hunter2\n");
        $this->put('.git/config', "[core] password\n");
        $this->put('sub/.htaccess', "password\n");
        $this->put('.well-known/acme.txt', "acme\n");
        $this->put('page.php', "<?php echo 'password';\n");
        $this->put('config.inc', "<?php \$password = 1;\n");
        $this->put('page.php~', "<?php echo 'password';\n");
        $this->put('page.php.bak', "<?php echo 'password';\n");
        $this->put('page.phtml', "<?php echo 'password';\n");
        $this->put('escape.js', "in root\n");
        symlink('hello.txt', $this->path('link-in.txt'));
        symlink('sub', $this->path('link-dir'));
        symlink('../outside/secret.txt', $this->path('link-out.txt'));
        symlink('../outside', $this->path('link-out-dir'));
        symlink('.env', $this->path('link-to-dotfile.txt'));
        symlink('page.php', $this->path('link-to-source.txt'));
        symlink($this->dir . '/outside/secret.js.gz', $this->path('escape.js.gz'));
    }

    private static function removeTree(string $path): void
    {
        if (is_link($path) || is_file($path)) {
            @unlink($path);
            return;
        }
        if (!is_dir($path)) {
            return;
        }
        foreach (scandir($path) ?: [] as $entry) {
            if ($entry !== '.' && $entry !== '..') {
                self::removeTree("$path/$entry");
            }
        }
        @rmdir($path);
    }
}
