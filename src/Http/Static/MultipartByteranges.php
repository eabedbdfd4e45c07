<?php

declare(strict_types=1);

namespace Kiln\Http\Static;

/**
 * The layout of a multipart/byteranges body (RFC 9110 §14.6), sans-I/O: part headers as literal
 * segments between [offset, length] slices of the file, so the body streams from the file and its
 * exact length is known before the first byte is sent.
 *
 *     \r\n--BOUNDARY\r\nContent-Type: T\r\nContent-Range: bytes a-b/SIZE\r\n\r\n<bytes a..b>
 *     ...
 *     \r\n--BOUNDARY--\r\n
 */
final class MultipartByteranges
{
    /**
     * @param non-empty-list<ByteRange> $ranges
     * @param string $boundary 1-70 characters of the RFC 2046 set; random when not given
     */
    public function __construct(
        private readonly array $ranges,
        private readonly int $size,
        private readonly string $partType,
        private ?string $boundary = null,
    ) {
        $this->boundary ??= bin2hex(random_bytes(12));
        if (preg_match("~^[0-9A-Za-z'()+_,./:=?-]{1,70}$~D", $this->boundary) !== 1) {
            throw new \ValueError("A multipart boundary is 1-70 letters, digits or '()+_,-./:=? (RFC 2046), got '{$this->boundary}'");
        }
    }

    /** The Content-Type of the whole reply. */
    public function contentType(): string
    {
        return 'multipart/byteranges; boundary=' . $this->boundary;
    }

    /** @return list<string|array{int, int}> literal bytes, or [offset, length] of the file */
    public function segments(): array
    {
        $segments = [];
        foreach ($this->ranges as $range) {
            $segments[] = "\r\n--{$this->boundary}\r\nContent-Type: {$this->partType}\r\n"
                . 'Content-Range: ' . $range->contentRange($this->size) . "\r\n\r\n";
            $segments[] = [$range->first, $range->length()];
        }
        $segments[] = "\r\n--{$this->boundary}--\r\n";
        return $segments;
    }
}
