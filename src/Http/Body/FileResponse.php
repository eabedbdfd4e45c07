<?php

declare(strict_types=1);

namespace Kiln\Http\Body;

use Kiln\Http\Static\MimeTypes;

/**
 * Content-Type by extension and a safe Content-Disposition for Response::file().
 *
 * @internal
 */
final class FileResponse
{
    /** Content-Type by extension, from the server's one MIME map. */
    public static function contentType(string $path): string
    {
        return MimeTypes::forPath($path);
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
