<?php

declare(strict_types=1);

namespace Kiln\Http;

use Kiln\Http\Static\FileServer;
use Kiln\Http\Static\PathGuard;
use Kiln\Http\Static\StaticOptions;

/**
 * Serves the files under a document root, safely and completely: MIME types, ETag / Last-Modified,
 * conditional requests (304 / 412), ranges (206, multipart/byteranges, 416), HEAD, Cache-Control
 * rules, precompressed .br / .gz siblings and on-the-fly gzip (see Static\FileServer, StaticOptions).
 *
 * handle() resolves the URL itself: decoded once, dot segments refused (Static\PathGuard), dotfiles
 * but /.well-known/ 404, PHP sources 403, nothing outside the root (through symlinks neither; symlinks
 * that stay inside are followed), a directory without its trailing slash 301 (query kept), a directory
 * with index.html serves it, one without 403 (no listings, as nginx). GET and HEAD only (405 + Allow).
 *
 * serveFile() serves one file a document-root layer already resolved (index.php and PATH_INFO are its
 * business), with every header rule, after checking that the file is still inside the root; POST too
 * when the layer asks (Apache's default handler serves it, nginx answers 405).
 */
final class StaticFiles implements RequestHandler
{
    private readonly string $root;

    /** The root with one trailing slash: what every served real path starts with. */
    private readonly string $prefix;

    private readonly FileServer $files;

    private readonly StaticOptions $options;

    public function __construct(string $root, ?StaticOptions $options = null)
    {
        $real = realpath($root);
        if ($real === false || !is_dir($real)) {
            throw new \ValueError("Document root '$root' is not a directory");
        }
        $this->root = $real;
        $this->prefix = rtrim($real, '/') . '/';
        $this->options = $options ?? new StaticOptions();
        $this->files = new FileServer($real, $this->options);
    }

    public function root(): string
    {
        return $this->root;
    }

    public function handle(Request $request): Response
    {
        $method = $request->method();
        if ($method !== 'GET' && $method !== 'HEAD') {
            return FileServer::methodNotAllowed();
        }
        $raw = $request->path();
        $path = PathGuard::decode($raw);
        if ($path === null) {
            return FileServer::status(400);
        }
        if (PathGuard::isHidden($path)) {
            return FileServer::status(404);
        }
        $file = $this->prefix . ltrim($path, '/');
        clearstatcache(); // a long-lived worker must see files change
        if (is_dir($file)) {
            $directory = realpath($file);
            if ($directory === false || ($directory !== $this->root && !$this->contains($directory))) {
                return FileServer::status(404);
            }
            if (!str_ends_with($path, '/')) {
                // One leading slash: "//host" would be a protocol-relative redirect to another site.
                $query = $request->queryString();
                return Response::redirect('/' . ltrim($raw, '/') . '/' . ($query === '' ? '' : '?' . $query), 301);
            }
            $index = $this->index($file);
            if ($index === null) {
                return FileServer::status(403);
            }
            $file = $index;
        }
        $real = realpath($file);
        if ($real === false || !$this->contains($real)) {
            return FileServer::status(404);
        }
        return $this->files->serve($request, $real, $path);
    }

    /**
     * Serves one regular file already resolved to its real path (by a document-root layer), with every
     * rule of handle() but path resolution. A path outside the root, or through a dotfile, is a 404.
     *
     * @param bool $post serve POST as GET (without ranges), as Apache's default handler does for a document
     *                   root: a form or a payment gateway that posts back to a `.html` page; else 405
     */
    public function serveFile(Request $request, string $realPath, bool $post = false): Response
    {
        if (!$this->contains($realPath)) {
            return FileServer::status(404);
        }
        $path = PathGuard::decode($request->path()) ?? '/' . substr($realPath, \strlen($this->prefix));
        return $this->files->serve($request, $realPath, $path, $post);
    }

    /** Inside the root, and no dotfile or dot-directory on the way (but .well-known). */
    private function contains(string $real): bool
    {
        return str_starts_with($real, $this->prefix) && !PathGuard::isHidden(substr($real, \strlen($this->prefix)));
    }

    private function index(string $directory): ?string
    {
        foreach ($this->options->index as $name) {
            if (is_file($directory . $name)) {
                return $directory . $name;
            }
        }
        return null;
    }
}
