<?php

declare(strict_types=1);

namespace Kiln\Http\Multipart;

use Kiln\Http\BadRequestBodyException;
use Kiln\Http\Body\BodyLimits;
use Kiln\Http\UploadedFile;

/**
 * Sans-I/O multipart/form-data parser (RFC 7578, RFC 2046 §5.1): feed() bytes in pieces of any size,
 * then finish(). Field values are kept in memory (BodyLimits::$formBytes in all); file parts are written
 * to temporary files in $tempDir as they arrive. Memory use does not grow with file sizes.
 *
 * Errors are BadRequestBodyException: 400 for a malformed body, 413 for a count or size limit. A file over
 * BodyLimits::$fileSize (or a preceding MAX_FILE_SIZE field) is kept as an UploadedFile with
 * UPLOAD_ERR_INI_SIZE (UPLOAD_ERR_FORM_SIZE) and no data; a body that ends inside a file part gives
 * that file UPLOAD_ERR_PARTIAL (both as PHP does). On an error, or abort(), temporary files are removed;
 * after finish() they belong to the UploadedFile objects.
 *
 * With BodyLimits::$asPhp the counts are PHP's (main/rfc1867.c): fields past $fields and file parts past $files
 * are dropped unread, a part past $parts ends the parsing with what came before it, and warnings() holds PHP's
 * warning for each; a file part without a filename only counts against $files once it is reached.
 */
final class MultipartParser
{
    private const PREAMBLE = 0;
    private const DELIMITER = 1;
    private const HEADERS = 2;
    private const BODY = 3;
    private const DONE = 4;

    private readonly string $delimiter;

    private readonly string $tempDir;

    private int $state = self::PREAMBLE;

    private string $buffer = "\r\n"; // so that a boundary at the very start matches CRLF "--" boundary

    private bool $empty = true;

    private int $parts = 0;

    private int $fieldBytes = 0;

    private ?PartHeaders $part = null;

    private string $value = '';

    private ?FileSpool $file = null;

    private ?int $maxFileSize = null;

    /** @var list<array{string, string}> */
    private array $fields = [];

    /** @var list<array{string, UploadedFile}> */
    private array $files = [];

    /** A part dropped under BodyLimits::$asPhp: its bytes are skipped, never held. */
    private bool $skipping = false;

    /** Files with a filename so far (BodyLimits::$asPhp counts these). */
    private int $uploads = 0;

    /** @var array<string, string> PHP's warnings, keyed by the limit, under BodyLimits::$asPhp */
    private array $warnings = [];

    public function __construct(
        string $boundary,
        private readonly BodyLimits $limits = new BodyLimits(),
        ?string $tempDir = null,
    ) {
        if (preg_match('/\A[0-9A-Za-z\'()+_,\-.\/:=? ]{0,69}[0-9A-Za-z\'()+_,\-.\/:=?]\z/', $boundary) !== 1) {
            throw new \ValueError('A multipart boundary has 1 to 70 characters from RFC 2046 bchars, not ending in a space');
        }
        $this->delimiter = "\r\n--" . $boundary;
        $this->tempDir = $tempDir ?? sys_get_temp_dir();
    }

    /**
     * The boundary parameter of a multipart/form-data Content-Type.
     *
     * @throws BadRequestBodyException when missing or invalid
     */
    public static function boundary(string $contentType): string
    {
        $pattern = '/;[ \t]*boundary[ \t]*=[ \t]*(?:"([^"\\\\]{1,70})"|([!#$%&\'*+\-.^_`|~0-9A-Za-z]{1,70}))[ \t]*(?:;|\z)/i';
        if (preg_match($pattern, $contentType, $m) !== 1) {
            throw new BadRequestBodyException('multipart/form-data needs a boundary parameter of 1 to 70 characters');
        }
        $boundary = $m[1] !== '' ? $m[1] : ($m[2] ?? '');
        if (preg_match('/\A[0-9A-Za-z\'()+_,\-.\/:=? ]*[0-9A-Za-z\'()+_,\-.\/:=?]\z/', $boundary) !== 1) {
            throw new BadRequestBodyException('Invalid multipart boundary');
        }
        return $boundary;
    }

    /** @throws BadRequestBodyException */
    public function feed(string $bytes): void
    {
        if ($bytes === '' || $this->state === self::DONE) {
            return;
        }
        $this->empty = false;
        $this->buffer .= $bytes;
        try {
            while ($this->step()) {
                // each step consumes input or changes state
            }
        } catch (BadRequestBodyException $e) {
            $this->abort();
            throw $e;
        }
    }

    /**
     * @return array{list<array{string, string}>, list<array{string, UploadedFile}>} fields and files, by
     *         name as sent, in body order
     * @throws BadRequestBodyException
     */
    public function finish(): array
    {
        if ($this->state === self::BODY && $this->file !== null) {
            $this->endPart(\UPLOAD_ERR_PARTIAL);
            $this->state = self::DONE;
        }
        if ($this->state !== self::DONE && !$this->empty) {
            $this->abort();
            throw new BadRequestBodyException('Multipart body ends before its closing boundary');
        }
        $this->state = self::DONE;
        return [$this->fields, $this->files];
    }

    /**
     * The warnings PHP gives for this body's parts past max_input_vars, max_file_uploads and
     * max_multipart_body_parts (BodyLimits::$asPhp), in its words.
     *
     * @return list<string>
     */
    public function warnings(): array
    {
        return array_values($this->warnings);
    }

    /** Removes every temporary file made so far. */
    public function abort(): void
    {
        $this->file?->discard();
        $this->file = null;
        foreach ($this->files as [, $file]) {
            $file->discard();
        }
        $this->files = $this->fields = [];
        $this->state = self::DONE;
    }

    /** @throws BadRequestBodyException */
    private function step(): bool
    {
        switch ($this->state) {
            case self::PREAMBLE:
                $at = strpos($this->buffer, $this->delimiter);
                if ($at === false) {
                    $this->buffer = substr($this->buffer, -(\strlen($this->delimiter) - 1));
                    return false;
                }
                $this->buffer = substr($this->buffer, $at + \strlen($this->delimiter));
                $this->state = self::DELIMITER;
                return true;
            case self::DELIMITER:
                return $this->afterDelimiter();
            case self::HEADERS:
                return $this->headers();
            case self::BODY:
                $at = strpos($this->buffer, $this->delimiter);
                if ($at === false) {
                    $keep = \strlen($this->delimiter) - 1;
                    if (\strlen($this->buffer) > $keep) {
                        $this->data(substr($this->buffer, 0, -$keep));
                        $this->buffer = substr($this->buffer, -$keep);
                    }
                    return false;
                }
                $this->data(substr($this->buffer, 0, $at));
                $this->buffer = substr($this->buffer, $at + \strlen($this->delimiter));
                $this->endPart();
                $this->state = self::DELIMITER;
                return true;
            default:
                $this->buffer = '';
                return false;
        }
    }

    /** After a delimiter: "--" ends the body, else optional whitespace and CRLF start a part. */
    private function afterDelimiter(): bool
    {
        if (\strlen($this->buffer) < 2) {
            return false;
        }
        if (str_starts_with($this->buffer, '--')) {
            $this->buffer = '';
            $this->state = self::DONE;
            return false;
        }
        $eol = strpos($this->buffer, "\r\n");
        $padding = $eol === false ? rtrim($this->buffer, "\r") : substr($this->buffer, 0, $eol);
        if (strspn($padding, " \t") !== \strlen($padding) || \strlen($padding) > 256) {
            throw new BadRequestBodyException('Malformed multipart boundary line');
        }
        if ($eol === false) {
            return false;
        }
        if (++$this->parts > $this->limits->parts) {
            if ($this->limits->asPhp) {
                $this->warnings['parts'] = "PHP Request Startup: Multipart body parts limit exceeded {$this->limits->parts}. "
                    . 'To increase the limit change max_multipart_body_parts in php.ini.';
                $this->buffer = '';
                $this->state = self::DONE;
                return false;
            }
            throw new BadRequestBodyException("More than {$this->limits->parts} multipart parts", 413);
        }
        $this->buffer = substr($this->buffer, $eol + 2);
        $this->state = self::HEADERS;
        return true;
    }

    private function headers(): bool
    {
        $max = $this->limits->partHeaderBytes;
        $end = str_starts_with($this->buffer, "\r\n") ? -2 : strpos($this->buffer, "\r\n\r\n");
        if ($end === false || $end > $max) {
            if ($end !== false || \strlen($this->buffer) > $max + 4) {
                throw new BadRequestBodyException("A multipart part header is over $max bytes", 413);
            }
            return false;
        }
        $part = PartHeaders::parse($end < 0 ? '' : substr($this->buffer, 0, $end));
        $this->buffer = substr($this->buffer, $end + 4);
        $this->startPart($part);
        $this->state = self::BODY;
        return true;
    }

    private function startPart(PartHeaders $part): void
    {
        $this->part = $part;
        $this->value = '';
        $this->skipping = false;
        if ($part->filename === null) {
            if (\count($this->fields) >= $this->limits->fields) {
                if (!$this->limits->asPhp) {
                    throw new BadRequestBodyException("More than {$this->limits->fields} form fields", 413);
                }
                $this->warnings['fields'] ??= "PHP Request Startup: Input variables exceeded {$this->limits->fields}. "
                    . 'To increase the limit change max_input_vars in php.ini.';
                $this->skipping = true;
            }
            return;
        }
        if ($this->limits->asPhp) {
            if ($this->uploads >= $this->limits->files) {
                $this->warnings['files'] ??= 'Maximum number of allowable file uploads has been exceeded';
                $this->skipping = true; // no temporary file: the bytes are dropped as they come
                return;
            }
            if ($part->filename !== '') {
                $this->uploads++;
            }
        } elseif (\count($this->files) >= $this->limits->files) {
            throw new BadRequestBodyException("More than {$this->limits->files} uploaded files", 413);
        }
        $this->file = new FileSpool($part, $this->tempDir);
    }

    private function data(string $bytes): void
    {
        if ($bytes === '' || $this->skipping) {
            return;
        }
        if ($this->file === null) {
            $this->fieldBytes += \strlen($bytes);
            if ($this->fieldBytes > $this->limits->formBytes) {
                throw new BadRequestBodyException("Form fields over {$this->limits->formBytes} bytes", 413);
            }
            $this->value .= $bytes;
            return;
        }
        $this->file->write($bytes, $this->maxFileSize, $this->limits->fileSize);
    }

    private function endPart(int $error = \UPLOAD_ERR_OK): void
    {
        $part = $this->part;
        if ($part === null) {
            return;
        }
        $this->part = null;
        if ($this->skipping) {
            $this->skipping = false;
            return;
        }
        if ($part->filename === null) {
            $this->fields[] = [$part->name, $this->value];
            if ($part->name === 'MAX_FILE_SIZE' && ctype_digit($this->value)) {
                $this->maxFileSize = (int) $this->value;
            }
            $this->value = '';
            return;
        }
        if ($this->file !== null) {
            $this->files[] = [$part->name, $this->file->close($error)];
            $this->file = null;
        }
    }
}
