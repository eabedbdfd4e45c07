<?php

declare(strict_types=1);

namespace Kiln\App\Handler;

/**
 * Routes `echo` output to the request that produced it, also when requests interleave in Fibers.
 *
 * PHP's output buffer is process-global, so one worker-wide `ob_start` handler with chunk size 1 sees every
 * write the moment it happens, while the writing Fiber is still `Fiber::getCurrent()`. It appends the bytes
 * to that Fiber's open capture (a WeakMap keyed by Fiber, so a finished Fiber takes its entry with it) and
 * swallows them; output from a Fiber that is not capturing (the server, a timer, the main context) passes
 * through to the next buffer level or STDOUT as before. Code outside any Fiber can capture too (tests, CLI).
 *
 * This is the one process-wide singleton of the App layer, because the resource it wraps is process-wide.
 * A handler that opens its own ob_start() keeps it to itself until it closes it — but PHP has one buffer
 * stack, so if it suspends with one open, what other requests echo meanwhile lands in it too (render
 * templates without awaiting in between). A buffer a handler leaves open is flushed into that handler's
 * capture when no other request is capturing (else it cannot be told whose it is, and is left alone).
 *
 * Fast path: a capture goes to a slot of plain properties instead of the WeakMap when the slot is free and
 * its Fiber has no capture open in the WeakMap (when no capture is open at all, the common case, that needs
 * no lookup), and its end() needs neither the current Fiber nor a lookup. Captures begun while the slot is
 * taken (nested ones, other Fibers') go to the WeakMap, which write() asks first, so they nest correctly
 * above it. The slot's Fiber is held by a weak reference (kept from one capture to the next, so a Fiber
 * serving request after request does not make a new one): a Fiber destroyed while suspended inside its
 * capture ends no capture (the invoker ends captures without a finally, see PreparedHandler), so the next
 * begin() finds the reference empty and frees the slot; the destroyed Fiber's WeakMap entry goes by itself.
 *
 * @internal used by HandlerInvoker and ResultConverter
 */
final class OutputCapture
{
    private static ?self $instance = null;

    /**
     * Fiber => bytes captured so far, or null while that Fiber is not capturing: a Fiber keeps its entry
     * between captures (a connection's Fiber serves request after request), which spares a weak reference
     * being registered and dropped per request; the entry goes with the Fiber.
     *
     * @var \WeakMap<object, ?string>
     */
    private \WeakMap $fibers;

    /** Capture of the main context (outside any Fiber); null when not capturing. */
    private ?string $main = null;

    /** Captures begun in Fibers and not ended yet (the slot's and the WeakMap's). */
    private int $open = 0;

    /** What the slot captured so far; null while the slot is free. */
    private ?string $slot = null;

    /** @var \WeakReference<object>|null the Fiber holding the slot (while it is taken), or the last one that did */
    private ?\WeakReference $slotFiber = null;

    /** Our ob_start level; 0 while not installed (never yet, or someone ended our buffer). */
    private int $level = 0;

    private function __construct()
    {
        $this->fibers = new \WeakMap();
    }

    public static function instance(): self
    {
        return self::$instance ??= new self();
    }

    /**
     * Starts capturing the current Fiber's output. Returns what to hand back to end(): captures nest,
     * so an inner one (a sub-request, a streamed step) does not steal the outer one's bytes.
     *
     * @return string|false|null for end(): false for the slot, else the outer capture's bytes (null: none)
     */
    public function begin(): string|false|null
    {
        $fiber = \Fiber::getCurrent();
        if ($this->open === 0 && $fiber !== null && $this->level !== 0 && $this->slotFiber?->get() === $fiber) {
            // Nothing is capturing and this Fiber held the slot last (a connection's Fiber serving request
            // after request): it takes the slot again. With nothing open, the slot is free.
            $this->open = 1;
            $this->slot = '';
            return false;
        }
        if ($this->level === 0) {
            $this->install();
        }
        if ($fiber === null) {
            $outer = $this->main;
            $this->main = '';
            return $outer;
        }
        ++$this->open;
        if ($this->slot !== null && $this->slotFiber?->get() === null) {
            // The slot's Fiber was destroyed inside its capture: nothing will end that capture.
            $this->slot = null;
            --$this->open;
        }
        if ($this->slot === null && ($this->open === 1 || !isset($this->fibers[$fiber]))) {
            $this->slot = '';
            if ($this->slotFiber?->get() !== $fiber) {
                $this->slotFiber = \WeakReference::create($fiber);
            }
            return false;
        }
        $outer = $this->fibers[$fiber] ?? null;
        $this->fibers[$fiber] = '';
        return $outer;
    }

    /**
     * Stops the capture begin() started in this same Fiber and returns the bytes written meanwhile.
     *
     * @param string|false|null $outer what begin() returned
     */
    public function end(string|false|null $outer): string
    {
        if (\ob_get_level() > $this->level && $this->level !== 0) {
            $this->flushLeftOpen();
        }
        if ($outer === false) {
            $bytes = $this->slot ?? '';
            $this->slot = null;
            if ($this->open > 0) { // else uninstall() dropped it
                --$this->open;
            }
            return $bytes;
        }
        $fiber = \Fiber::getCurrent();
        if ($fiber === null) {
            $bytes = $this->main ?? '';
            $this->main = $outer;
            return $bytes;
        }
        $bytes = $this->fibers[$fiber] ?? '';
        $this->fibers[$fiber] = $outer;
        if ($this->open > 0) {
            --$this->open;
        }
        return $bytes;
    }

    /** The ob_start callback: keeps the bytes of a capturing Fiber, passes the rest on. */
    public function write(string $bytes, int $phase): string
    {
        if (($phase & PHP_OUTPUT_HANDLER_FINAL) !== 0) {
            $this->level = 0; // our buffer is being ended; begin() installs a new one
        }
        if ($bytes === '') {
            return '';
        }
        $fiber = \Fiber::getCurrent();
        if ($fiber === null) {
            if ($this->main === null) {
                return $bytes;
            }
            $this->main .= $bytes;
            return '';
        }
        if (isset($this->fibers[$fiber])) {
            $this->fibers[$fiber] .= $bytes;
            return '';
        }
        if ($this->slot !== null && $this->slotFiber?->get() === $fiber) {
            $this->slot .= $bytes;
            return '';
        }
        return $bytes;
    }

    /** Removes the handler (tests restore the buffer stack they found). Open captures are lost. */
    public function uninstall(): void
    {
        if ($this->level !== 0 && ob_get_level() === $this->level) {
            ob_end_flush();
        }
        $this->level = 0;
        $this->main = null;
        $this->fibers = new \WeakMap();
        $this->open = 0;
        $this->slot = null;
    }

    /** Flushes buffers a handler left open into its capture, if no other capture could own them. */
    private function flushLeftOpen(): void
    {
        // Owners of open captures: the main context, the slot's Fiber, each Fiber capturing in the WeakMap.
        $capturing = ($this->main === null ? 0 : 1) + ($this->slot === null ? 0 : 1);
        foreach ($this->fibers as $fiber => $bytes) {
            if ($bytes !== null && ($this->slot === null || $this->slotFiber?->get() !== $fiber)) {
                $capturing++;
            }
        }
        if ($capturing !== 1) {
            return;
        }
        while (ob_get_level() > $this->level && ob_end_flush()) {
            // the bytes go through write() into the one open capture
        }
    }

    private function install(): void
    {
        if (!ob_start($this->write(...), 1)) {
            throw new \Error('Cannot install the output capture buffer (ob_start failed)');
        }
        $this->level = ob_get_level();
    }
}
