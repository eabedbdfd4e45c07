<?php

declare(strict_types=1);

namespace Kiln\Http;

/**
 * A file from a multipart/form-data body, spooled to a temporary file. Unless moved, that file is
 * removed when the exchange ends. clientFilename() is what the client said, without any directory part:
 * display it, never use it as a path; clientFullPath() keeps the folders a browser sends for a folder upload
 * (`photos/2024/x.jpg`, PHP's `full_path`), to rebuild the tree under a directory of your own after checking each
 * segment. error() is an UPLOAD_ERR_* code; only UPLOAD_ERR_OK has a file.
 */
final class UploadedFile
{
    private bool $moved = false;

    public function __construct(
        private readonly string $path,
        private readonly string $clientFilename,
        private readonly string $clientMediaType,
        private readonly int $size,
        private readonly int $error = \UPLOAD_ERR_OK,
        private readonly ?string $clientFullPath = null,
    ) {}

    public function clientFilename(): string
    {
        return $this->clientFilename;
    }

    /** The file name as the client sent it, folders included (control characters dropped): never trust it as a path. */
    public function clientFullPath(): string
    {
        return $this->clientFullPath ?? $this->clientFilename;
    }

    /** The part's Content-Type as sent ("" when absent); not checked against the content. */
    public function clientMediaType(): string
    {
        return $this->clientMediaType;
    }

    public function size(): int
    {
        return $this->size;
    }

    public function error(): int
    {
        return $this->error;
    }

    public function isOk(): bool
    {
        return $this->error === \UPLOAD_ERR_OK;
    }

    public function isMoved(): bool
    {
        return $this->moved;
    }

    /** The temporary file; valid until the exchange ends or moveTo(). */
    public function path(): string
    {
        $this->assertAvailable();
        return $this->path;
    }

    public function contents(): string
    {
        $contents = @file_get_contents($this->path());
        if ($contents === false) {
            throw new HttpException("Cannot read the uploaded file {$this->path}");
        }
        return $contents;
    }

    /**
     * Moves the file to $target (rename, or copy and unlink across file systems), once. Like
     * move_uploaded_file(), the result gets mode 0666 less the umask.
     */
    public function moveTo(string $target): void
    {
        $this->assertAvailable();
        if ($target === '' || str_contains($target, "\0")) {
            throw new \ValueError('moveTo() needs a file path');
        }
        if (!@rename($this->path, $target)) {
            if (!@copy($this->path, $target)) {
                throw new HttpException("Cannot move the uploaded file to $target: " . (error_get_last()['message'] ?? 'unknown error'));
            }
            @unlink($this->path);
        }
        @chmod($target, 0666 & ~umask());
        $this->moved = true;
    }

    /**
     * Removes the temporary file unless it was moved. Called when the exchange ends.
     *
     * @internal
     */
    public function discard(): void
    {
        if (!$this->moved && $this->path !== '' && is_file($this->path)) {
            @unlink($this->path);
        }
    }

    private function assertAvailable(): void
    {
        if ($this->error !== \UPLOAD_ERR_OK) {
            throw new \Error("The upload of '{$this->clientFilename}' failed (UPLOAD_ERR code {$this->error}): check error() first");
        }
        if ($this->moved) {
            throw new \Error("The uploaded file '{$this->clientFilename}' was already moved");
        }
    }
}
