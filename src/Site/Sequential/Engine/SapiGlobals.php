<?php

declare(strict_types=1);

namespace Kiln\Site\Sequential\Engine;

/**
 * Where the fields the sequential tier touches sit in PHP's `sapi_globals` (SG()):
 *
 *     void *server_context;
 *     sapi_request_info request_info;  // request_method first; request_body (php://input) 7th pointer
 *     sapi_headers_struct sapi_headers;
 *     int64_t read_post_bytes; unsigned char post_read; unsigned char headers_sent;
 *     zend_stat_t global_stat;
 *     char *default_mimetype;           // ← found by the probe
 *     char *default_charset;
 *     HashTable *rfc1867_uploaded_files; // is_uploaded_file(), move_uploaded_file()
 *
 * default_mimetype is found by setting the two ini values to markers and looking for the two consecutive
 * pointers to them; the fields before it are at fixed offsets from the start. Callers check each field
 * again through its own observable effect before they rely on it.
 *
 * @internal
 */
final class SapiGlobals
{
    /** Bytes scanned for the markers: sapi_globals_struct is ~570 bytes on 64-bit Linux. */
    private const SCAN = 1024;

    private static self|false|null $found = null;

    private function __construct(
        public readonly Native $native,
        /** Address of sapi_globals. */
        public readonly int $base,
        /** Offset of default_mimetype. */
        public readonly int $mimetype,
    ) {}

    public static function find(): ?self
    {
        if (self::$found === null) {
            self::$found = false;
            $native = Native::get();
            if ($native !== null && \PHP_INT_SIZE === 8) {
                try {
                    self::$found = self::probe($native) ?? false;
                } catch (\FFI\Exception) {
                    self::$found = false; // sapi_globals not exported
                }
            }
        }
        return self::$found === false ? null : self::$found;
    }

    /** Address of SG(request_info).request_method (const char *). */
    public function requestMethod(): int
    {
        return $this->base + 8;
    }

    /** Address of SG(request_info).proto_num (int: 1000 for HTTP/1.0, 1001 for HTTP/1.1), its last field. */
    public function protocolNumber(): int
    {
        return $this->base + 8 + 144;
    }

    /** Address of SG(request_info).request_body (php_stream *), the stream php://input reads. */
    public function requestBody(): int
    {
        return $this->base + 8 + 6 * 8;
    }

    /**
     * Address of SG(headers_sent) (unsigned char), or null when no candidate passes the check: the byte
     * must follow headers_sent() both ways. It sits 7 bytes + sizeof(struct stat) before default_mimetype
     * (144 on x86-64, 128 on arm64).
     */
    public function headersSent(): ?int
    {
        $native = $this->native;
        foreach ([144, 128] as $stat) {
            $address = $this->base + $this->mimetype - $stat - 7;
            $byte = $native->ffi->cast('unsigned char*', $address);
            \assert($byte instanceof \FFI\CData);
            $was = Native::int($byte[0]);
            if ($was !== (headers_sent() ? 1 : 0)) {
                continue;
            }
            $byte[0] = 1 - $was;
            $follows = headers_sent() === ($was === 0);
            $byte[0] = $was;
            if ($follows && headers_sent() === ($was === 1)) {
                return $address;
            }
        }
        return null;
    }

    /** Address of SG(rfc1867_uploaded_files) (HashTable *). */
    public function uploadedFiles(): int
    {
        return $this->base + $this->mimetype + 16;
    }

    /** Back to $value; by ini_restore() when that is the startup value, so the ini is not left "modified". */
    private static function restore(string $name, string $value): void
    {
        $all = ini_get_all(null, true);
        $startup = \is_array($all) && \is_array($all[$name] ?? null) ? ($all[$name]['global_value'] ?? null) : null;
        if ($startup === $value) {
            ini_restore($name);
        } else {
            @ini_set($name, $value);
        }
    }

    private static function probe(Native $native): ?self
    {
        $base = $native->symbol('sapi_globals');
        if (!$native->readable($base, self::SCAN + 16)) {
            return null;
        }
        $mimetype = (string) ini_get('default_mimetype');
        $charset = (string) ini_get('default_charset');
        $mark = bin2hex(random_bytes(8));
        // default_charset warns about an encoding it does not know; the marker is only looked at.
        if (@ini_set('default_mimetype', "kiln/probe-$mark") === false || @ini_set('default_charset', "kiln-probe-$mark") === false) {
            return null;
        }
        try {
            $native->refresh();
            $words = $native->words($base);
            for ($i = 1; $i < self::SCAN / 8; $i++) {
                if ($native->isString(Native::int($words[$i]), "kiln/probe-$mark")
                    && $native->isString(Native::int($words[$i + 1]), "kiln-probe-$mark")) {
                    return new self($native, $base, $i * 8);
                }
            }
            return null;
        } finally {
            self::restore('default_mimetype', $mimetype);
            self::restore('default_charset', $charset);
        }
    }
}
