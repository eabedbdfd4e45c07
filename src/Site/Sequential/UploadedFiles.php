<?php

declare(strict_types=1);

namespace Kiln\Site\Sequential;

use Kiln\Http\UploadedFile;

/**
 * Request::files() (one UploadedFile per leaf, nested by field name) in the shape PHP gives `$_FILES`:
 * for `a[b][]` the attribute comes second, `$_FILES['a']['name']['b'][0]`, with the keys in PHP's order
 * (name, full_path, type, tmp_name, error, size). tmp_name is the upload's spooled temporary file; full_path
 * keeps the folders a browser sends for a folder upload, name is without them, as PHP has them.
 */
final class UploadedFiles
{
    private const ATTRIBUTES = ['name', 'full_path', 'type', 'tmp_name', 'error', 'size'];

    /**
     * @param array<array-key, mixed> $files as Request::files() returns them
     * @param list<string> $paths receives the temporary path of every upload that has one
     * @return array<array-key, mixed>
     */
    public static function toGlobal(array $files, array &$paths = []): array
    {
        $global = [];
        foreach ($files as $field => $node) {
            if ($node instanceof UploadedFile) {
                $global[$field] = self::leaf($node, $paths);
                continue;
            }
            if (!\is_array($node)) {
                continue;
            }
            foreach (self::ATTRIBUTES as $attribute) {
                $global[$field][$attribute] = self::attribute($node, $attribute, $paths, $attribute === 'tmp_name');
            }
        }
        return $global;
    }

    /**
     * @param list<string> $paths
     * @return array{name: string, full_path: string, type: string, tmp_name: string, error: int, size: int}
     */
    private static function leaf(UploadedFile $file, array &$paths): array
    {
        $ok = $file->isOk();
        $path = $ok ? $file->path() : '';
        if ($path !== '') {
            $paths[] = $path;
        }
        $noFile = $file->error() === \UPLOAD_ERR_NO_FILE;
        return [
            'name' => $file->clientFilename(),
            'full_path' => $file->clientFullPath(),
            'type' => $noFile ? '' : $file->clientMediaType(),
            'tmp_name' => $path,
            'error' => $file->error(),
            'size' => $ok ? $file->size() : 0,
        ];
    }

    /**
     * One attribute across a nested tree of files.
     *
     * @param array<array-key, mixed> $node
     * @param list<string> $paths
     * @return array<array-key, mixed>
     */
    private static function attribute(array $node, string $attribute, array &$paths, bool $collect): array
    {
        $out = [];
        foreach ($node as $key => $child) {
            if ($child instanceof UploadedFile) {
                $unused = [];
                $leaf = $collect ? self::leaf($child, $paths) : self::leaf($child, $unused);
                $out[$key] = $leaf[$attribute];
            } elseif (\is_array($child)) {
                $out[$key] = self::attribute($child, $attribute, $paths, $collect);
            }
        }
        return $out;
    }
}
