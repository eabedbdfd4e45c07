<?php

declare(strict_types=1);

namespace Kiln\Site\Sequential\Engine;

/**
 * Gives `php://input` the request body. PHP reads php://input from SG(request_info).request_body, a
 * temporary stream a web SAPI fills with the body; under the CLI it is created empty the first time
 * php://input is opened and stays so. This opens it once, then per request empties it and writes the
 * body into it, so fopen/file_get_contents('php://input') read the body natively, as often as a script
 * wants, with no stream wrapper in the way of other php:// streams.
 *
 * probe() checks it end to end (write a marker, read it back through php://input, empty it); when that
 * fails php://input stays empty and the reason is logged. A fork of the process that probed shares the
 * stream (in its own copy of the memory): the fork tier probes once in its fork server and fills it in
 * each child.
 *
 * @internal
 */
final class InputBody
{
    private const PIECE = 65536;

    /** PHP_STREAM_FREE_CLOSE: call the stream's close, release it (and its resource). */
    private const FREE_CLOSE = 3;

    /** Bytes in the stream now. */
    private int $length = 0;

    private bool $released = false;

    private function __construct(
        private readonly Native $native,
        private readonly \FFI\CData $stream,
        /** Address of SG(request_info).request_body. */
        private readonly int $slot,
    ) {}

    public static function probe(?SapiGlobals $sapi): ?self
    {
        if ($sapi === null) {
            return null;
        }
        $native = $sapi->native;
        try {
            $slot = $native->words($sapi->requestBody());
            if (Native::int($slot[0]) === 0) {
                $input = @fopen('php://input', 'rb'); // creates SG(request_info).request_body
                if ($input !== false) {
                    fclose($input);
                }
            }
            $address = Native::int($slot[0]);
            $native->refresh();
            if ($address === 0 || !$native->readable($address, 64)) {
                return null;
            }
            $stream = $native->ffi->cast('php_stream*', $address);
            \assert($stream instanceof \FFI\CData);
            $body = new self($native, $stream, $sapi->requestBody());
            $body->length = 1; // unknown: make replace() empty it
            $marker = 'kiln-probe-' . bin2hex(random_bytes(8));
            $body->replace($marker);
            $read = file_get_contents('php://input');
            $body->replace('');
            return $read === $marker && file_get_contents('php://input') === '' ? $body : null;
        } catch (\Throwable) {
            return null;
        }
    }

    /** php://input reads $bytes from now on. */
    public function replace(string $bytes): void
    {
        $this->empty();
        if ($bytes !== '') {
            $this->write($bytes);
        }
    }

    /** php://input reads nothing from now on. */
    public function clear(): void
    {
        if ($this->length > 0) {
            $this->empty();
        }
    }

    /**
     * php://input reads what $stream holds from its position on, copied in pieces.
     *
     * @param resource $stream
     */
    public function replaceFromStream(mixed $stream): void
    {
        $this->empty();
        while (!feof($stream)) {
            $piece = fread($stream, self::PIECE);
            if ($piece === false || $piece === '') {
                break;
            }
            $this->write($piece);
        }
    }

    /**
     * For a process about to leave with _exit(), and only then: closes the stream now, as PHP's request shutdown
     * would, which removes the temporary file PHP spilled a body past 16 KiB to. A php://input handle the script
     * still holds points at the freed stream, so no PHP code may run between this and the _exit(). Nothing else
     * here may be called afterwards.
     */
    public function release(): void
    {
        if ($this->released) {
            return;
        }
        $this->released = true;
        $this->native->words($this->slot)[0] = 0; // SG(request_info).request_body: PHP's shutdown must not find it
        $this->native->ffi->_php_stream_free($this->stream, self::FREE_CLOSE); // @phpstan-ignore method.notFound
    }

    private function empty(): void
    {
        if ($this->length > 0) {
            $ffi = $this->native->ffi;
            $ffi->_php_stream_truncate_set_size($this->stream, 0); // @phpstan-ignore method.notFound
            $ffi->_php_stream_seek($this->stream, 0, SEEK_SET); // @phpstan-ignore method.notFound
            $this->length = 0;
        }
    }

    private function write(string $bytes): void
    {
        $written = $this->native->ffi->_php_stream_write($this->stream, $bytes, \strlen($bytes)); // @phpstan-ignore method.notFound
        $this->length += max(0, Native::int($written));
    }
}
