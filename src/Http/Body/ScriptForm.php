<?php

declare(strict_types=1);

namespace Kiln\Http\Body;

use Kiln\Http\BadRequestBodyException;
use Kiln\Http\Multipart\MultipartParser;
use Kiln\Http\UploadedFile;

/**
 * `$_POST` and `$_FILES` of a POST as PHP builds them before a script starts, for the tiers that run scripts
 * in a process of Kiln's (sequential, fork), under BodyLimits::forScripts(): a body over post_max_size is not
 * read (no fields, no files); fields past max_input_vars and files past max_file_uploads are dropped; a file
 * over upload_max_filesize has UPLOAD_ERR_INI_SIZE and no temporary file. warnings holds what PHP says about
 * each, in its words, for the error log. Kiln's own limits (413 before the script) come before this.
 *
 * @api for the sequential and fork tiers
 */
final class ScriptForm
{
    private const PIECE = 65536;

    /**
     * @param array<array-key, mixed> $post
     * @param array<array-key, mixed> $files one UploadedFile per leaf, nested by field name (Request::files())
     * @param list<UploadedFile> $uploads every file, for the cleanup when the request ends
     * @param list<string> $warnings
     */
    private function __construct(
        public readonly array $post,
        public readonly array $files,
        public readonly array $uploads,
        public readonly array $warnings,
    ) {}

    /**
     * @param string $contentType the request's Content-Type header ('' without one)
     * @param int $length the body's size in bytes
     * @param string|resource $body the body, or a stream of it read from where it stands
     * @throws BadRequestBodyException for a malformed body (400): PHP would read what it could, Kiln refuses it
     */
    public static function read(string $contentType, int $length, mixed $body, BodyLimits $limits, ?string $tempDir = null): self
    {
        $semi = strpos($contentType, ';');
        $type = strtolower(trim($semi === false ? $contentType : substr($contentType, 0, $semi), " \t"));
        if ($length > $limits->postBytes) {
            // PHP reads no POST body over the limit, whatever its type; the multipart reader says it without the prefix.
            $prefix = $type === 'multipart/form-data' ? '' : 'PHP Request Startup: ';
            return new self([], [], [], ["{$prefix}POST Content-Length of $length bytes exceeds the limit of {$limits->postBytes} bytes"]);
        }
        if ($length === 0) {
            return new self([], [], [], []);
        }
        if ($type === 'application/x-www-form-urlencoded') {
            return self::urlencoded(\is_string($body) ? $body : (string) stream_get_contents($body), $limits);
        }
        if ($type !== 'multipart/form-data') {
            return new self([], [], [], []);
        }
        $parser = new MultipartParser(MultipartParser::boundary($contentType), $limits, $tempDir);
        if (\is_string($body)) {
            $parser->feed($body);
        } else {
            while (!feof($body) && ($piece = fread($body, self::PIECE)) !== false && $piece !== '') {
                $parser->feed($piece);
            }
        }
        [$fields, $files] = $parser->finish();
        try {
            return new self(FormNames::fields($fields, $limits), FormNames::files($files, $limits), array_column($files, 1), $parser->warnings());
        } catch (BadRequestBodyException $e) {
            foreach ($files as [, $file]) {
                $file->discard();
            }
            throw $e;
        }
    }

    /**
     * PHP's count for a urlencoded body (main/php_variables.c): every `&`-separated piece counts, empty ones too
     * (a single trailing `&` excepted), and the piece that goes past max_input_vars is still kept before the
     * warning stops the rest.
     */
    private static function urlencoded(string $body, BodyLimits $limits): self
    {
        $pieces = explode('&', $body);
        if (end($pieces) === '') {
            array_pop($pieces);
        }
        if (\count($pieces) <= $limits->fields) {
            parse_str($body, $post);
            return new self($post, [], [], []);
        }
        // parse_str() stops at max_input_vars itself, so the one piece past it is added on its own, as PHP adds it.
        parse_str(implode('&', \array_slice($pieces, 0, $limits->fields)), $post);
        $extra = $pieces[$limits->fields];
        $eq = strpos($extra, '=');
        if ($extra !== '') {
            FormNames::insert($post, urldecode($eq === false ? $extra : substr($extra, 0, $eq)), $eq === false ? '' : urldecode(substr($extra, $eq + 1)));
        }
        $warning = "PHP Request Startup: Input variables exceeded {$limits->fields}. To increase the limit change max_input_vars in php.ini.";
        return new self($post, [], [], [$warning]);
    }
}
