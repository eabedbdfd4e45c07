<?php

declare(strict_types=1);

namespace Kiln\Site\Sequential;

use Kiln\Site\Sequential\Engine\OutputStack;
use Kiln\Site\Sequential\Engine\SapiGlobals;
use Kiln\Site\Sequential\Engine\Stdout;

/**
 * Everything a script prints, as the body of its response. begin() opens an output buffer on top of the
 * stack; its callback keeps what is flushed through it and never passes anything on, so nothing reaches
 * the CLI's standard output, and PHP's headers stay unsent (headers_sent() is false) while the script
 * runs, as under php-fpm with output_buffering on. ob_clean() and ob_get_clean() at that level discard,
 * ob_flush() keeps.
 *
 * The buffer is removable, as php-fpm's is: a script may end every buffer (`while (ob_get_level())
 * ob_end_clean();`). From then on PHP writes to the process's standard output and sends its headers (from
 * then on header() warns, as under php-fpm); Stdout catches those bytes and end() appends them, and
 * SG(headers_sent) is set back to 0 for the next request. Without FFI for either, what such a script
 * prints after ending the buffer is lost (and logged once), or its worker is retired after the response.
 *
 * end() flushes the buffers the script left open into the body (as PHP does at the end of a request),
 * its own included: its callback takes the rest, so the body is not copied out of it a second time.
 */
final class ScriptOutput
{
    private string $body = '';

    /** Level of our buffer while it is on the stack; 0 otherwise. */
    private int $level = 0;

    /** The script ended our buffer. */
    private bool $removed = false;

    private bool $warned = false;

    private ?\Closure $callback = null;

    /** What a script's output handler threw while end() flushed its buffer (PHP still removed the buffer). */
    private ?\Throwable $failure = null;

    private function __construct(
        private readonly ?Stdout $stdout,
        private ?\FFI\CData $headersSent,
    ) {}

    public static function create(): self
    {
        $sapi = SapiGlobals::find();
        $address = $sapi?->headersSent();
        $byte = $sapi === null || $address === null ? null : $sapi->native->ffi->cast('unsigned char*', $address);
        return new self(Stdout::get(), $byte instanceof \FFI\CData ? $byte : null);
    }

    /** Whether a script that ends every buffer keeps its output and leaves the next request able to send headers. */
    public function isComplete(): bool
    {
        return $this->stdout !== null && $this->headersSent !== null;
    }

    public function begin(): void
    {
        if ($this->level !== 0) {
            throw new \Error('ScriptOutput::begin() called twice without end()');
        }
        if ($this->headersSent !== null && headers_sent()) {
            $this->headersSent[0] = 0; // an earlier write to standard output must not block this request's headers
        }
        if ($this->stdout !== null && $this->stdout->isCapturing()) {
            $this->stdout->take(); // left by a request whose end() failed: not this request's output
        }
        $this->body = '';
        $this->removed = false;
        $this->failure = null;
        if (!ob_start($this->callback ??= $this->write(...), 0, PHP_OUTPUT_HANDLER_STDFLAGS)) {
            throw new \Error('Cannot open the output buffer of a script (ob_start failed)');
        }
        // Named as php-fpm's output_buffering buffer is: MediaWiki sets its Content-Length only under that name.
        OutputStack::find()?->nameAsDefault();
        $this->level = ob_get_level();
    }

    /**
     * Flushes what the script left in its own buffers into ours, closes ours (its callback takes what it
     * held) and returns the whole body. Whether headers were sent to standard output meanwhile is
     * wasRemoved().
     */
    public function end(): string
    {
        // Every level from the top down to ours (or, when the script ended ours, to the one below it) flushes
        // into the one below; ours keeps what it gets and passes nothing on. With the level back at 0 first,
        // the callback takes its final call for the end of the request, not for a script ending the buffer.
        $level = $this->level;
        $this->level = 0;
        // The script's own levels first: those above ours, or above the one below ours when the script ended
        // ours (what they hold then goes to standard output). Only they get `@`: it marks error_reporting as a
        // changed setting, which IniReset would then reset.
        $floor = $this->removed ? $level - 1 : $level;
        while (ob_get_level() > $floor && $this->endScriptLevel()) {
            // each level flushes into the one below
        }
        if (!$this->removed && ob_get_level() === $level) {
            ob_end_flush();
        }
        $body = $this->body;
        $this->body = '';
        if ($this->removed && $this->stdout !== null && $this->stdout->isCapturing()) {
            $body .= $this->stdout->take();
        }
        if ($this->headersSent !== null && headers_sent()) { // headers_sent() reads the same flag, cheaper than FFI
            $this->headersSent[0] = 0;
        }
        return $body;
    }

    /**
     * The exception a script's output handler threw while end() flushed the script's buffers, once: PHP's
     * answer to it is the caller's (as at the end of a request, the buffer's content does not reach the client).
     */
    public function takeFailure(): ?\Throwable
    {
        $failure = $this->failure;
        $this->failure = null;
        return $failure;
    }

    /**
     * Ends the script's top buffer into the one below, as PHP's end of a request does; false when it cannot go.
     *
     * - A buffer started without PHP_OUTPUT_HANDLER_REMOVABLE is made removable first (OutputStack): PHP
     *   forces it out at the end of a request, ob_end_flush() alone would refuse it.
     * - A handler that throws does not stop the unwinding: PHP disables it and removes its buffer all the
     *   same; its exception is kept for takeFailure(). As in PHP, where the request stops there, the buffers
     *   below it are then dropped without calling their handlers.
     */
    private function endScriptLevel(): bool
    {
        $before = ob_get_level();
        $failed = $this->failure !== null;
        $flags = ob_get_status()['flags'] ?? 0;
        $fixed = \is_int($flags) && ($flags & PHP_OUTPUT_HANDLER_REMOVABLE) === 0;
        if (($fixed || $failed) && OutputStack::find()?->unlock($before - 1, $failed) !== true && $fixed) {
            return false;
        }
        try {
            return $failed ? @ob_end_clean() : @ob_end_flush();
        } catch (\Throwable $e) { // @phpstan-ignore catch.neverThrown (a script's output or error handler may throw)
            if (ob_get_level() >= $before) {
                return false; // the buffer stayed: an error handler turned PHP's notice into an exception
            }
            $this->failure ??= $e;
            return true;
        }
    }

    /** Tells PHP its headers were not sent (after something printed to standard output), when FFI allows. */
    public function resetHeadersSent(): void
    {
        if ($this->headersSent !== null && headers_sent()) { // headers_sent() reads the same flag, cheaper than FFI
            $this->headersSent[0] = 0;
        }
    }

    /** Whether the script ended our buffer (so its headers went out to standard output). */
    public function wasRemoved(): bool
    {
        return $this->removed;
    }

    /** Whether this request left PHP believing its headers were sent, with no way to undo it here. */
    public function leftHeadersSent(): bool
    {
        return $this->headersSent === null && headers_sent();
    }

    /** The buffer's callback. */
    private function write(string $bytes, int $phase): string
    {
        if (($phase & PHP_OUTPUT_HANDLER_CLEAN) === 0) {
            $this->body .= $bytes;
        }
        if (($phase & PHP_OUTPUT_HANDLER_FINAL) !== 0 && $this->level !== 0) {
            $this->removed = true; // the script ended our buffer
            if ($this->stdout !== null) {
                $this->stdout->start();
            } elseif (!$this->warned) {
                $this->warned = true;
                error_log('Kiln: a script ended the output buffer of the sequential tier; what it prints afterwards goes '
                    . 'to standard output, not to the client (FFI memfd_create() is unavailable)');
            }
        }
        return '';
    }
}
