<?php

declare(strict_types=1);

namespace Kiln\Http\Static;

/**
 * A file gzipped on the fly, piece by piece: the file is read 64 KiB at a time and each piece goes
 * through one incremental deflate context, so memory stays at one piece plus zlib's window whatever
 * the file's size. The file is opened on the first piece (a HEAD never opens it) and closed when the
 * generator ends or is dropped.
 */
final class GzipStream
{
    private const PIECE = 65536;

    /** @return \Generator<int, string> */
    public static function pieces(string $path, int $level): \Generator
    {
        $file = @fopen($path, 'rb');
        if ($file === false) {
            throw new \RuntimeException("Cannot open $path for reading");
        }
        try {
            $deflate = deflate_init(ZLIB_ENCODING_GZIP, ['level' => $level]);
            if ($deflate === false) {
                throw new \RuntimeException('Cannot start a gzip stream');
            }
            while (($piece = fread($file, self::PIECE)) !== false && $piece !== '') {
                $out = deflate_add($deflate, $piece, ZLIB_NO_FLUSH);
                if ($out !== false && $out !== '') {
                    yield $out;
                }
            }
            yield (string) deflate_add($deflate, '', ZLIB_FINISH);
        } finally {
            fclose($file);
        }
    }
}
