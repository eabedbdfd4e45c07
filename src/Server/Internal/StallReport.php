<?php

declare(strict_types=1);

namespace Kiln\Server\Internal;

use Kiln\Loop\Loop;
use Kiln\Server\Log;

/**
 * The worker's side of --stall-timeout (docs/design/028): when the supervisor finds the worker's event loop
 * standing still, it sends SIGNAL; the handler logs what the worker is doing — the requests in flight and
 * the PHP stack of the code that holds the loop — and returns into that code.
 *
 * Asynchronous signals are turned on, so the handler runs at the stuck code's next instruction (a CPU loop
 * checks for it at every jump back), or as soon as a blocking call returns. A sleep(), usleep() or
 * stream_select() is cut short by the signal, as by any signal; a blocking read on a socket is restarted
 * (SA_RESTART). The event loop's own signal handlers only queue the signal, so they are safe to run at any
 * instruction too. The handler only reads and logs (one write per line): it never throws, and never touches
 * the loop.
 *
 * @internal
 */
final class StallReport
{
    public const SIGNAL = SIGUSR2;

    private const FRAMES = 30;

    /**
     * @param \Closure(): list<string> $inFlight the requests being handled (InFlight::inFlight())
     * @param ?int $from the process whose signal asks for the report (the supervisor); null: any
     */
    public function __construct(
        private readonly Log $log,
        private readonly \Closure $inFlight,
        private readonly ?int $from = null,
    ) {}

    /**
     * Installs the handler and keeps the signal from the loop's watchers (Loop::onSignal() for it then throws).
     * An app that already handles the signal (its boot called Loop::onSignal() or pcntl_signal() for it) keeps
     * it: the report is skipped in this worker, and a warning says so.
     *
     * @return bool whether the report is installed
     */
    public function install(): bool
    {
        if (!\in_array(pcntl_signal_get_handler(self::SIGNAL), [SIG_DFL, SIG_IGN], true)) {
            $this->log->warning('the app handles SIGUSR2 (Loop::onSignal() or pcntl_signal() at boot), the signal --stall-timeout\'s report uses:'
                . ' a stalled loop is not reported with its stack in this worker (the supervisor still logs it, sends SIGUSR2 and ends the worker)');
            return false;
        }
        pcntl_signal(self::SIGNAL, $this->report(...), true);
        pcntl_async_signals(true);
        Loop::reserveSignal(self::SIGNAL, 'SIGUSR2 cannot be watched in a Kiln worker with --stall-timeout: its stall report uses it (docs/design/028);'
            . ' watch another signal, or start with --stall-timeout=0');
        return true;
    }

    /** @param array<string, mixed> $info the signal's siginfo: who sent it */
    private function report(int $signal = self::SIGNAL, array $info = []): void
    {
        // Only the supervisor asks for the report; a USR2 from elsewhere (a signal to every process of the
        // service) says nothing about a stall, and is ignored.
        if ($this->from !== null && ($info['pid'] ?? $this->from) !== $this->from) {
            return;
        }
        try {
            $frames = debug_backtrace(DEBUG_BACKTRACE_IGNORE_ARGS); // [0]: this handler, called where the code stood
            $this->log->warning(self::describe(($this->inFlight)(), $frames));
        } catch (\Throwable) {
            // Nothing may be thrown into the code the signal interrupted; the supervisor has logged the stall.
        }
    }

    /**
     * The warning's text: the requests, where the code stood when the signal came, then the calls that led
     * there, innermost first, as PHP prints a trace.
     *
     * @param list<string> $requests
     * @param list<array{file?: string, line?: int, function?: string, class?: string, type?: string}> $frames from debug_backtrace()
     *        in the signal handler: the first is the handler's own (its file and line are where the code stood)
     */
    public static function describe(array $requests, array $frames): string
    {
        $text = 'event loop stalled, in flight: ' . ($requests === [] ? 'no request (a timer, a background job or a connection handler)' : implode(', ', $requests));
        $here = array_shift($frames);
        $text .= "\nholding the loop at " . (isset($here['file']) ? $here['file'] . '(' . ($here['line'] ?? 0) . ')' : 'an internal function');
        foreach (\array_slice($frames, 0, self::FRAMES) as $i => $frame) {
            $where = isset($frame['file']) ? $frame['file'] . '(' . ($frame['line'] ?? 0) . ')' : '[internal function]';
            $text .= "\n#$i $where: " . ($frame['class'] ?? '') . ($frame['type'] ?? '') . ($frame['function'] ?? '') . '()';
        }
        if (\count($frames) > self::FRAMES) {
            $text .= "\n... " . (\count($frames) - self::FRAMES) . ' more frames';
        }
        return $text;
    }
}
