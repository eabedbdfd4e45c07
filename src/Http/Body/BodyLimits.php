<?php

declare(strict_types=1);

namespace Kiln\Http\Body;

/**
 * What Request::parsedBody() and files() accept. Defaults follow php.ini's (max_input_vars,
 * max_input_nesting_level, max_file_uploads). Over a count or size: BadRequestBodyException 413; too deep: 400.
 * A file over $fileSize does not fail the request: it arrives with UPLOAD_ERR_INI_SIZE, as in PHP.
 *
 * forScripts() gives PHP's own rules instead, for the tiers that build $_POST and $_FILES for a script: past a
 * count the excess is dropped, a body over post_max_size leaves the form empty, and the parser reports the
 * warnings PHP gives, never a 413 (ScriptForm).
 */
final class BodyLimits
{
    public function __construct(
        /** Most fields: urlencoded pairs, or multipart parts without a filename. */
        public readonly int $fields = 1000,
        /** Deepest nesting of a field name (`a[b][c]` is 2) or of a JSON document. */
        public readonly int $depth = 64,
        /** Largest urlencoded or JSON body, and most bytes of multipart field values together (held in memory). */
        public readonly int $formBytes = 8 * 1024 * 1024,
        /** Most multipart parts (fields and files). */
        public readonly int $parts = 1000,
        /** Largest header block of one multipart part. */
        public readonly int $partHeaderBytes = 8192,
        /** Most uploaded files. */
        public readonly int $files = 20,
        /** Largest uploaded file in bytes (spooled to disk, never held in memory). */
        public readonly int $fileSize = 64 * 1024 * 1024,
        /** Largest body whose form is read at all (post_max_size; with $asPhp only). */
        public readonly int $postBytes = \PHP_INT_MAX,
        /** Past $fields, $files or $parts: false, a 413; true, what PHP does (see forScripts()). */
        public readonly bool $asPhp = false,
    ) {
        foreach (get_object_vars($this) as $name => $value) {
            // PHP takes max_input_vars, max_file_uploads and so max_multipart_body_parts of 0: nothing of that kind is kept.
            $least = $asPhp && \in_array($name, ['fields', 'files', 'parts'], true) ? 0 : 1;
            if (\is_int($value) && $value < $least) {
                throw new \ValueError("Body limit '$name' must be at least $least, got $value");
            }
        }
    }

    /**
     * PHP's limits as this process has them (ini_get()): max_input_vars, max_file_uploads, upload_max_filesize and
     * post_max_size (0: no limit), max_multipart_body_parts (-1: max_input_vars + max_file_uploads) and
     * max_input_nesting_level. They are PHP_INI_PERDIR settings, fixed when PHP starts, so the value read is the
     * one the script reads too.
     */
    public static function forScripts(): self
    {
        $vars = max(0, (int) \ini_get('max_input_vars'));
        $files = max(0, (int) \ini_get('max_file_uploads'));
        $parts = \ini_get('max_multipart_body_parts');
        $parts = $parts === false || (int) $parts < 0 ? $vars + $files : (int) $parts; // the setting is new in PHP 8.2.3
        $fileSize = self::quantity('upload_max_filesize');
        $postSize = self::quantity('post_max_size');
        return new self(
            fields: $vars,
            depth: max(1, (int) \ini_get('max_input_nesting_level')),
            formBytes: $postSize,
            parts: $parts,
            files: $files,
            fileSize: $fileSize,
            postBytes: $postSize,
            asPhp: true,
        );
    }

    /** A size setting in bytes as PHP reads it ("2M"); PHP_INT_MAX for 0 or less, which PHP takes as no limit. */
    private static function quantity(string $name): int
    {
        $bytes = @ini_parse_quantity((string) \ini_get($name));
        return $bytes > 0 ? $bytes : \PHP_INT_MAX;
    }
}
