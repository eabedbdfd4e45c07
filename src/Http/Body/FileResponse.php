<?php

declare(strict_types=1);

namespace Kiln\Http\Body;

/**
 * Content-Type by extension and a safe Content-Disposition for Response::file().
 *
 * @internal
 */
final class FileResponse
{
    private const TYPES = [
        'html' => 'text/html; charset=utf-8', 'htm' => 'text/html; charset=utf-8', 'txt' => 'text/plain; charset=utf-8',
        'css' => 'text/css; charset=utf-8', 'js' => 'text/javascript; charset=utf-8', 'json' => 'application/json',
        'xml' => 'application/xml', 'csv' => 'text/csv; charset=utf-8', 'md' => 'text/markdown; charset=utf-8',
        'svg' => 'image/svg+xml', 'png' => 'image/png', 'jpg' => 'image/jpeg', 'jpeg' => 'image/jpeg',
        'gif' => 'image/gif', 'webp' => 'image/webp', 'avif' => 'image/avif', 'ico' => 'image/x-icon',
        'pdf' => 'application/pdf', 'zip' => 'application/zip', 'gz' => 'application/gzip', 'wasm' => 'application/wasm',
        'mp4' => 'video/mp4', 'webm' => 'video/webm', 'mp3' => 'audio/mpeg', 'woff2' => 'font/woff2',
    ];

    public static function contentType(string $path): string
    {
        return self::TYPES[strtolower(pathinfo($path, \PATHINFO_EXTENSION))] ?? 'application/octet-stream';
    }

    /**
     * `attachment; filename="ascii"; filename*=UTF-8''percent-encoded` (RFC 6266): the quoted name keeps
     * printable ASCII only (others become "_", quotes and backslashes too), the extended one the rest.
     */
    public static function attachment(string $downloadName): string
    {
        $name = preg_replace('/[\x00-\x1F\x7F]/', '', $downloadName) ?? '';
        $name = basename(strtr($name, '\\', '/'));
        if ($name === '' || $name === '.' || $name === '..') {
            $name = 'download';
        }
        // One "_" per character; per byte when the name is not UTF-8.
        $ascii = preg_replace('/[^\x20-\x7E]|["\\\\%]/u', '_', $name) ?? preg_replace('/[^\x20-\x7E]|["\\\\%]/', '_', $name) ?? 'download';
        $value = 'attachment; filename="' . $ascii . '"';
        if ($ascii !== $name) {
            $value .= "; filename*=UTF-8''" . rawurlencode($name);
        }
        return $value;
    }
}
