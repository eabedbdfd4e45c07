<?php

declare(strict_types=1);

namespace Kiln\Site\Fork\Internal;

use Kiln\Site\Sequential\Engine\OutputStack;
use Kiln\Site\Sequential\Engine\Stdout;

/**
 * @internal In a forked child: the output buffer that puts the CGI header block (status from
 * http_response_code(), fields from headers_list()) in front of the first byte of output, on fd 1 (the
 * connection). Like php-fpm with output_buffering=8192: header() works until 8 KiB of output went out; a
 * page whose whole output fits in that is sent with its length (Content-Length), as under Apache's mod_php.
 * After a fatal error with nothing sent yet, the status becomes 500 unless the script set another, and
 * the output so far is sent, as php-fpm and php-cgi do with display_errors off.
 *
 * Fast exit: a forked child spends ~5 ms in PHP's own process shutdown (freeing memory it shares
 * copy-on-write with the fork server). So when PHP's request shutdown flushes this buffer for the last
 * time (after the shutdown functions and the destructors), the child removes unmoved uploads and leaves
 * with _exit() (through FFI). Without FFI it ends the normal way. The session is written just before,
 * by the last shutdown function (shutdown()).
 */
final class ChildOutput
{
    public const CHUNK = 8192;

    private const FATAL = \E_ERROR | \E_PARSE | \E_CORE_ERROR | \E_COMPILE_ERROR | \E_USER_ERROR | \E_RECOVERABLE_ERROR;

    private bool $headSent = false;

    private bool $ending = false;

    private bool $fatal = false;

    /** The script ended this buffer: what it prints afterwards is caught by $stdout until the end. */
    private bool $removed = false;

    private ?Stdout $stdout = null;

    /**
     * @param resource $sink fd 1
     * @param (\Closure(int): never)|null $quickExit _exit(), when available
     * @param \Closure(): void $cleanUp
     */
    public function __construct(
        private readonly mixed $sink,
        private readonly ?\Closure $quickExit,
        private readonly \Closure $cleanUp,
        /** False for HEAD: what a script prints then (often nothing) is no measure of its GET, so no length is added. */
        private readonly bool $measured = true,
    ) {}

    public function start(): void
    {
        \ob_start($this->handle(...), self::CHUNK);
        // Named as php-fpm's output_buffering buffer is: MediaWiki sets its Content-Length only under that name.
        OutputStack::find()?->nameAsDefault();
    }

    /** The last shutdown function: after it come destructors, then the final flush of this buffer. */
    public function shutdown(): void
    {
        if ($this->ending) {
            return; // ran already (from the shutdown function, or from the fallback destructor)
        }
        $error = \error_get_last();
        $this->fatal = $error !== null && ($error['type'] & self::FATAL) !== 0;
        // PHP's own rule for a fatal error (false: no status set, under the CLI).
        if ($this->fatal && !$this->headSent && \in_array(\http_response_code(), [200, false], true) && !self::displaysErrors()) {
            \http_response_code(500);
        }
        // A session kept by a save handler of the script's own is written here, the last point before the final flush
        // where its code may still use output buffers (a close() that ends the buffer its open() started, as Zabbix's
        // does) and where a cookie its write() sets still goes out with the head. PHP writes it a step later, after the
        // destructors: what a destructor puts in $_SESSION then is not saved. PHP's own handlers (files, redis, …) are
        // written in end(), after the destructors, as PHP does. After error_get_last() above: a warning of the write
        // must not hide a fatal error.
        if (\session_status() === \PHP_SESSION_ACTIVE && \ini_get('session.save_handler') === 'user') {
            @\session_write_close();
        }
        $this->ending = true;
        if ($this->removed) {
            // The script ended this buffer: its own buffers, then what reached standard output, follow the head.
            while (\ob_get_level() > 0 && @\ob_end_flush()) {
            }
            $this->sendHead();
            $printed = $this->stdout?->take() ?? '';
            if ($printed !== '') {
                @\fwrite($this->sink, $printed);
            }
            $this->end();
        } elseif (\ob_get_level() === 0) {
            // PHP dropped every output buffer without a call to their handlers (as it does when memory ran out):
            // the output so far is lost, as under php-cgi, but the head still goes out.
            $this->sendHead();
            $this->end();
        }
    }

    private function handle(string $buffer, int $phase): string
    {
        // The head leaves with the first byte of the body, as under a web SAPI: until then header() still counts,
        // even after the script cleaned or ended this buffer (phpMyAdmin does both).
        // At the last flush, a head not sent yet goes with the whole body: its length is known, and is sent with it.
        $whole = ($phase & \PHP_OUTPUT_HANDLER_FINAL) !== 0 && $this->ending;
        if ($buffer !== '' && ($phase & \PHP_OUTPUT_HANDLER_CLEAN) === 0) {
            $this->sendHead($whole ? \strlen($buffer) : null);
            @\fwrite($this->sink, $buffer);
        }
        if (($phase & \PHP_OUTPUT_HANDLER_FINAL) !== 0) {
            if ($this->ending) {
                $this->sendHead(0);
                $this->end();
            } elseif (!$this->removed) {
                $this->removed = true;
                $this->stdout = Stdout::get();
                $this->stdout?->start();
                if ($this->stdout === null) {
                    $this->sendHead(); // what the script prints next goes straight out: the head must be first
                }
            }
        }

        return '';
    }

    /** display_errors as PHP reads it: on, yes, true, stdout, stderr or a non-zero number. */
    private static function displaysErrors(): bool
    {
        $value = \strtolower(\trim((string) \ini_get('display_errors')));

        return \in_array($value, ['on', 'yes', 'true', 'stdout', 'stderr'], true) || (int) $value !== 0;
    }

    private function end(): void
    {
        if (\session_status() === \PHP_SESSION_ACTIVE) {
            @\session_write_close();
        }
        @\fflush($this->sink);
        ($this->cleanUp)();
        if ($this->quickExit !== null) {
            ($this->quickExit)($this->fatal ? 255 : 0);
        }
    }

    /** @param int|null $length the whole body's, when it goes out with the head: a Content-Length unless the script set one */
    private function sendHead(?int $length = null): void
    {
        if ($this->headSent) {
            return;
        }
        $this->headSent = true;
        $status = \http_response_code();
        $head = \is_int($status) && $status !== 200 ? "Status: $status\r\n" : '';
        $type = false;
        foreach (\headers_list() as $line) {
            $type = $type || \stripos($line, 'content-type:') === 0;
            $length = \stripos($line, 'content-length:') === 0 ? null : $length;
            $head .= \strtr($line, ["\r" => '', "\n" => '']) . "\r\n";
        }
        if ($length !== null && $this->measured) {
            $head .= "Content-Length: $length\r\n";
        }
        $mime = (string) \ini_get('default_mimetype');
        if (!$type && $mime !== '') {
            $charset = (string) \ini_get('default_charset');
            $head .= 'Content-Type: ' . $mime . ($charset !== '' && \str_starts_with($mime, 'text/') ? "; charset=$charset" : '') . "\r\n";
        }
        @\fwrite($this->sink, ($head === '' ? "Status: 200\r\n" : $head) . "\r\n");
    }
}
