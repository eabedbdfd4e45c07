<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Site;

/**
 * A document root in a temp directory, with what a real site holds and what must never be reached:
 * `BASE/root` is the root, `BASE/secret.txt`, `BASE/outside.php` and `BASE/outdir/` sit beside it,
 * symlinks point both inside and out, and `BASE/cgi` is a cgi-bin directory.
 */
final class SiteTree
{
    public const SECRET = 'SECRET-6f1d2c';

    /** @var array<string, string> path under BASE => content */
    private const FILES = [
        'secret.txt' => self::SECRET . "\n",
        'outside.php' => '<?php echo "' . self::SECRET . '";',
        'outdir/file.txt' => self::SECRET . "\n",
        'outdir/x.php' => '<?php echo "' . self::SECRET . '";',
        'root/index.php' => "<?php echo 'front';\n",
        'root/page.php' => "<?php echo 'page';\n",
        'root/api.php' => "<?php echo 'api';\n",
        'root/about.html' => "<h1>about</h1>\n",
        'root/style.css' => "body { color: red }\n",
        'root/config.inc' => "<?php \$password = 'hunter2';\n",
        'root/backup.php~' => "<?php \$password = 'hunter2';\n",
        'root/source.phps' => "<?php \$password = 'hunter2';\n",
        'root/old.php.bak' => "<?php \$password = 'hunter2';\n",
        'root/Page.PHP' => "<?php \$password = 'hunter2';\n",
        'root/view.phtml' => "<?php \$password = 'hunter2';\n",
        'root/tool.py' => "print('tool')\n",
        'root/.env' => "PASSWORD=hunter2\n",
        'root/.htaccess' => "# a dotfile: never served (and nothing in it for Kiln to apply)\n",
        'root/.git/config' => "[core]\n",
        'root/.well-known/acme.txt' => "acme\n",
        'root/.well-known/.hidden' => "hidden\n",
        'root/blog/index.php' => "<?php echo 'blog';\n",
        'root/blog/post.php' => "<?php echo 'post';\n",
        'root/blog/.hidden' => "hidden\n",
        'root/docs/index.html' => "<h1>docs</h1>\n",
        'root/both-index/index.php' => "<?php echo 'both';\n",
        'root/both-index/index.html' => "<h1>both</h1>\n",
        'root/thing.php' => "<?php echo 'thing';\n",
        'root/thing/index.html' => "<h1>thing</h1>\n",
        'root/both' => "both\n",
        'root/both.php' => "<?php echo 'both';\n",
        'root/plain' => "plain\n",
        'root/a/b.php' => "<?php echo 'b';\n",
        'root/deep/er/est/file.txt' => "deep\n",
        'root/my dir/file name.txt' => "spaces\n",
        'root/café.txt' => "café\n",
        'root/a+b.txt' => "plus\n",
        'cgi/hello.py' => "#!/bin/sh\necho hello\n",
        'cgi/noexec.py' => "#!/bin/sh\necho no\n",
        'cgi/sub/run.sh' => "#!/bin/sh\necho run\n",
    ];

    /** @var array<string, string> link under BASE => target */
    private const LINKS = [
        'root/link-in.txt' => 'style.css',
        'root/link-dir-in' => 'blog',
        'root/link-out.txt' => '../secret.txt',
        'root/link-dir-out' => '../outdir',
        'root/link-php-out.php' => '../outside.php',
        'root/link-src.txt' => 'config.inc',
        'root/abs-link' => '/etc/passwd',
        'cgi/link-out' => '../secret.txt',
    ];

    /** @return string BASE, symlink-free */
    public static function create(): string
    {
        $base = sys_get_temp_dir() . '/kiln-site-' . bin2hex(random_bytes(6));
        mkdir("$base/root/empty", 0o755, true);
        $base = (string) realpath($base);
        foreach (self::FILES as $path => $content) {
            if (!is_dir(\dirname("$base/$path"))) {
                mkdir(\dirname("$base/$path"), 0o755, true);
            }
            file_put_contents("$base/$path", $content);
        }
        chmod("$base/cgi/hello.py", 0o755);
        chmod("$base/cgi/sub/run.sh", 0o755);
        foreach (self::LINKS as $link => $target) {
            symlink($target, "$base/$link");
        }
        return $base;
    }

    public static function remove(string $dir): void
    {
        if ($dir === '' || !str_contains($dir, '/kiln-site-')) {
            return;
        }
        $items = new \RecursiveIteratorIterator(
            new \RecursiveDirectoryIterator($dir, \FilesystemIterator::SKIP_DOTS),
            \RecursiveIteratorIterator::CHILD_FIRST,
        );
        foreach ($items as $item) {
            \assert($item instanceof \SplFileInfo);
            $item->isDir() && !$item->isLink() ? rmdir($item->getPathname()) : unlink($item->getPathname());
        }
        rmdir($dir);
    }
}
