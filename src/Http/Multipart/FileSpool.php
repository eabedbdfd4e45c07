<?php

declare(strict_types=1);

namespace Kiln\Http\Multipart;

use Kiln\Http\UploadedFile;

/**
 * One file part being written to a temporary file, with the UPLOAD_ERR_* outcome.
 *
 * @internal
 */
final class FileSpool
{
    /** @var resource|null */
    private mixed $handle = null;

    private string $path = '';

    private int $size = 0;

    private int $error = \UPLOAD_ERR_OK;

    public function __construct(private readonly PartHeaders $part, string $tempDir)
    {
        if ($part->filename === '') {
            $this->error = \UPLOAD_ERR_NO_FILE; // a file input left empty
            return;
        }
        $path = @tempnam($tempDir, 'kiln-upload-');
        $handle = $path === false ? false : @fopen($path, 'wb');
        if ($path === false || $handle === false) {
            $this->error = \UPLOAD_ERR_CANT_WRITE;
            if ($path !== false) {
                @unlink($path);
            }
            return;
        }
        $this->path = $path;
        $this->handle = $handle;
    }

    /** Writes while within the limits; past one the data is dropped and the file gets the error. */
    public function write(string $bytes, ?int $formLimit, int $limit): void
    {
        $this->size += \strlen($bytes);
        if ($this->error !== \UPLOAD_ERR_OK) {
            return;
        }
        if ($formLimit !== null && $this->size > $formLimit) {
            $this->fail(\UPLOAD_ERR_FORM_SIZE);
        } elseif ($this->size > $limit) {
            $this->fail(\UPLOAD_ERR_INI_SIZE);
        } elseif ($this->handle !== null && @fwrite($this->handle, $bytes) !== \strlen($bytes)) {
            $this->fail(\UPLOAD_ERR_CANT_WRITE);
        }
    }

    /** The finished file; $error (UPLOAD_ERR_PARTIAL) when the body ended inside the part. */
    public function close(int $error = \UPLOAD_ERR_OK): UploadedFile
    {
        if ($error !== \UPLOAD_ERR_OK && $this->error === \UPLOAD_ERR_OK) {
            $this->fail($error);
        }
        if ($this->handle !== null) {
            fclose($this->handle);
            $this->handle = null;
        }
        $ok = $this->error === \UPLOAD_ERR_OK;
        return new UploadedFile($this->path, $this->part->filename ?? '', $this->part->contentType, $ok ? $this->size : 0, $this->error, $this->part->fullPath);
    }

    public function discard(): void
    {
        if ($this->handle !== null) {
            fclose($this->handle);
            $this->handle = null;
        }
        if ($this->path !== '') {
            @unlink($this->path);
            $this->path = '';
        }
    }

    private function fail(int $error): void
    {
        $this->error = $error;
        $this->discard();
    }
}
