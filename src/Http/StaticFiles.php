<?php

declare(strict_types=1);

namespace Kiln\Http;

use Kiln\Http\Body\FileResponse;

/**
 * Serves the files under a document root, safely: the path is decoded once, dot segments are refused,
 * dotfiles (but /.well-known/) and PHP sources are never sent, and nothing outside the root is reached,
 * through symlinks neither. GET and HEAD only.
 */
final class StaticFiles implements RequestHandler
{
    /** Never sent as files: PHP sources and their editor/backup copies. */
    private const SOURCE = '/\.(php\d?|phtml|phps|phar|inc)(~|\.bak|\.orig|\.swp)?$/i';

    private readonly string $root;

    public function __construct(string $root)
    {
        $real = realpath($root);
        if ($real === false || !is_dir($real)) {
            throw new \ValueError("Document root '$root' is not a directory");
        }
        $this->root = $real;
    }

    public function handle(Request $request): Response
    {
        $method = $request->method();
        if ($method !== 'GET' && $method !== 'HEAD') {
            $response = self::status(405);
            $response->setHeader('Allow', 'GET, HEAD');
            return $response;
        }
        $raw = $request->path();
        if (stripos($raw, '%2f') !== false || stripos($raw, '%5c') !== false || str_contains($raw, '%00')) {
            return self::status(400);
        }
        $path = rawurldecode($raw);
        if ($path === '' || $path[0] !== '/' || str_contains($path, "\0") || str_contains($path, '\\')) {
            return self::status(400);
        }
        foreach (explode('/', $path) as $segment) {
            if ($segment === '..' || $segment === '.') {
                return self::status(400);
            }
            if ($segment !== '' && $segment[0] === '.' && $segment !== '.well-known') {
                return self::status(404);
            }
        }
        $file = $this->root . $path;
        if (is_dir($file)) {
            if (!str_ends_with($path, '/')) {
                $query = $request->queryString();
                return Response::redirect($raw . '/' . ($query === '' ? '' : '?' . $query), 301);
            }
            $file .= 'index.html';
        }
        $real = realpath($file);
        if ($real === false || !is_file($real) || !str_starts_with($real, $this->root . '/')) {
            return self::status(404);
        }
        if (preg_match(self::SOURCE, $real) === 1) {
            return self::status(403);
        }
        return $this->send($request, $real);
    }

    private function send(Request $request, string $file): Response
    {
        $stat = stat($file);
        $handle = fopen($file, 'rb');
        if ($stat === false || $handle === false) {
            return self::status(403);
        }
        $etag = '"' . dechex($stat['mtime']) . '-' . dechex($stat['size']) . '"';
        $modified = gmdate('D, d M Y H:i:s', $stat['mtime']) . ' GMT';
        $headers = [
            'Content-Type' => FileResponse::contentType($file),
            'ETag' => $etag,
            'Last-Modified' => $modified,
        ];
        $match = $request->header('if-none-match');
        $since = $request->header('if-modified-since');
        if (($match !== null && ($match === $etag || $match === '*'))
            || ($match === null && $since !== null && strtotime($since) >= $stat['mtime'])) {
            fclose($handle);
            return new Response(304, ['ETag' => $etag, 'Last-Modified' => $modified]);
        }
        return new Response(200, $headers, $handle);
    }

    private static function status(int $status): Response
    {
        return Response::text($status . ' ' . Wire\ResponseEncoder::reason($status) . "\n", $status);
    }
}
