<?php

declare(strict_types=1);

namespace Kiln\Http\Body;

/**
 * What Request::parsedBody() and files() accept. Defaults follow php.ini's (max_input_vars,
 * max_input_nesting_level, max_file_uploads). Over a count or size: BadRequestBodyException 413; too deep: 400.
 * A file over $fileSize does not fail the request: it arrives with UPLOAD_ERR_INI_SIZE, as in PHP.
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
    ) {
        /** @var int $value */
        foreach (get_object_vars($this) as $name => $value) {
            if ($value < 1) {
                throw new \ValueError("Body limit '$name' must be greater than zero, got $value");
            }
        }
    }
}
