<?php

declare(strict_types=1);

namespace Kiln\Http\Internal;

/**
 * Collects a request body: in memory up to a threshold, then in an anonymous temporary file.
 * The file is unlinked as soon as it is created, so it disappears on close and even if the worker dies.
 *
 * @internal
 */
final class BodyBuffer
{
    private string $bytes = '';

    /** @var resource|null */
    private mixed $file = null;

    public function __construct(private readonly int $memoryLimit) {}

    public function append(string $data): void
    {
        if ($this->file !== null) {
            $this->writeAll($this->file, $data);
            return;
        }
        $this->bytes .= $data;
        if (\strlen($this->bytes) > $this->memoryLimit) {
            $this->file = $this->openFile();
            $this->writeAll($this->file, $this->bytes);
            $this->bytes = '';
        }
    }

    public function bytes(): string
    {
        return $this->bytes;
    }

    /** @return resource|null the spooled body, or null when it stayed in memory */
    public function file(): mixed
    {
        return $this->file;
    }

    /** @return resource */
    private function openFile(): mixed
    {
        $file = tmpfile();
        if ($file === false) {
            throw new \RuntimeException('Cannot create a temporary file for a request body in ' . sys_get_temp_dir());
        }
        $path = stream_get_meta_data($file)['uri'] ?? null;
        if (\is_string($path)) {
            @unlink($path);
        }
        return $file;
    }

    /** @param resource $file */
    private function writeAll(mixed $file, string $data): void
    {
        while ($data !== '') {
            $written = fwrite($file, $data);
            if ($written === false || $written === 0) {
                throw new \RuntimeException('Cannot write a request body to its temporary file (disk full?)');
            }
            $data = substr($data, $written);
        }
    }
}
