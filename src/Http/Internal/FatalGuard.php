<?php

declare(strict_types=1);

namespace Kiln\Http\Internal;

use Kiln\Http\ErrorResponse;
use Kiln\Http\Request;
use Kiln\Http\Response;
use Kiln\Loop\Loop;

/**
 * The last word of a worker that dies with requests in flight: a fatal error in one handler (undefined
 * function, memory exhausted, E_USER_ERROR), an exit() in a handler or script, or a crash of the loop ends
 * the process, and with it every request its other Fibers were serving. On shutdown:
 *
 * - a request whose handler set a last response (Request::setLastResponse()) gets it (not after a fatal
 *   error, unless it is an error Response the server made: the sequential tier sets a 504, then ends a script
 *   past its time limit with a fatal error): a Response at once; a Closure last, after the shutdown functions
 *   registered meanwhile ran (PHP's order for exit());
 * - every other request whose response has not started gets a short `500 Internal Server Error`;
 * - a response already under way (a static file being sent, a handler's stream) is finished: once every
 *   shutdown function ran, the worker stops accepting, asks for its replacement at once, and runs its loop
 *   until those responses are out (each connection then closes), for at most the drain timeout; what is
 *   left then is cut. When another handler was still running (answered with 500 below), nothing may run
 *   again: those responses are cut at once;
 * - a request that reached the worker but was never started (part of it parsed, or its bytes still unread
 *   in the socket, or arriving within FRESH_WAIT on a connection that has served nothing yet) gets a
 *   `503 Service Unavailable` with `Retry-After: 1`: it did not run, so the client may send it again, and it
 *   is not left with an empty reply. One that its client sends again by itself if the connection closes (a GET on
 *   a kept-alive connection that has served before, on a shared listener: UnstartedRequests) is not answered:
 *   its connection is closed, where a 503 would be an answer the client shows;
 * - idle keep-alive connections are closed gracefully (FIN, not reset).
 *
 * Every other write is blocking and bounded in time. The fatal error is logged. The supervisor replaces
 * the worker as it does any worker that exits.
 *
 * install() registers it with PHP. A test makes one with new and calls end() with the error it pretends,
 * passing $atExit to collect what would run later in PHP's shutdown, and runs that itself.
 *
 * @internal
 */
final class FatalGuard
{
    private const FATAL = E_ERROR | E_CORE_ERROR | E_COMPILE_ERROR | E_USER_ERROR | E_PARSE;

    /**
     * How long a connection that has served nothing yet may take to show its request (seconds): it was
     * accepted just before the worker ended, and the request may still be on its way.
     */
    private const FRESH_WAIT = 0.05;

    /** How long the shutdown may spend writing, over all connections (seconds). */
    private const BUDGET = 2.0;

    /** How long the deferred answers of exit() may take to write (seconds). */
    private const LAST_BUDGET = 5.0;

    /** Released first thing at shutdown so that a worker out of memory can still run this. */
    private ?string $reserve; // @phpstan-ignore property.onlyWritten (held for the memory it keeps)

    private bool $ended = false;

    private readonly int $pid;

    private bool $deferredSent = false;

    /** The 500 of a request in flight, made at install(): at shutdown memory may be short. */
    private readonly string $failed;

    /** The 503 of a request not yet started (it may be sent again), made at install(). */
    private readonly string $unavailable;

    /** finishUnderway() ran, or the responses under way were cut because it could not. */
    private bool $finishing = false;

    /** Holds the destructor that answers a script's exit() when a shutdown function exited too. */
    private static ?object $fallback = null; // @phpstan-ignore property.onlyWritten (held for its destructor)

    /**
     * @param \Closure(): void $retire stops the server accepting, for good
     * @param \Closure(\Closure(): void): void $atExit registers a function to run later in the process's
     *        shutdown (register_shutdown_function())
     * @param bool $sharedListener see install()
     */
    public function __construct(
        private readonly HttpCore $core,
        private readonly \Closure $retire,
        private readonly \Closure $atExit,
        private readonly bool $sharedListener,
    ) {
        $this->reserve = str_repeat("\0", 256 * 1024);
        $this->pid = getmypid() ?: 0;
        $this->failed = ErrorResponse::encoded($core->encoder, 500);
        $this->unavailable = ErrorResponse::encoded($core->encoder, 503, ['Retry-After' => '1']);
    }

    /**
     * Call once per worker, when the HTTP service starts.
     *
     * @param \Closure(): void $retire stops the server accepting, for good
     * @param bool $sharedListener the worker accepts from the server's one listening socket (not SO_REUSEPORT):
     *        a connection a client opens again then reaches a live worker
     */
    public static function install(HttpCore $core, \Closure $retire, bool $sharedListener): void
    {
        $guard = new self($core, $retire, static function (\Closure $function): void {
            register_shutdown_function($function);
        }, $sharedListener);
        register_shutdown_function($guard->shutdown(...));
    }

    private function shutdown(): void
    {
        $this->reserve = null; // first: a worker out of memory needs it back
        $this->end(error_get_last()); // read before any write: a failed one would take its place
    }

    /**
     * The process ends: answers, finishes or cuts what the worker was serving (see the class).
     *
     * @param array{type: int, message: string, file: string, line: int}|null $error error_get_last() as the
     *        process ends
     */
    public function end(?array $error): void
    {
        if ($this->ended) {
            return;
        }
        $this->ended = true;
        $this->reserve = null;
        if ((getmypid() ?: 0) !== $this->pid) {
            return; // A process forked by a handler must not answer its parent's clients.
        }
        $fatal = $error !== null && ($error['type'] & self::FATAL) !== 0;
        if ($fatal) {
            self::raiseMemoryLimit();
        }
        $this->core->writeBatch->flush(); // responses finished in this loop turn, before anything is cut or closed
        $deadline = microtime(true) + self::BUDGET;
        $answered = $underway = $cut = $last = 0;
        // The request of the script that ended the worker has a last response; any other handler that is
        // running (whether or not its connection is still open) is suspended in its Fiber, and must not run
        // again: then nothing of this process may run again.
        $suspended = 0;
        foreach ($this->core->running() as $request) {
            $suspended += $request->lastResponse() === null ? 1 : 0;
        }
        /** @var list<array{Connection, Request, \Closure(): Response}> $deferred */
        $deferred = [];
        $why = 'a script ended it with exit()'; // unless the handler that ended it said why (Request::setLastResponse())
        /** @var list<Connection> $idle */
        $idle = [];
        foreach ($this->core->connections() as $connection) {
            if ($connection->state !== ConnectionState::Responding || $connection->isQueued()) {
                if ($connection->output->pending() > 0 && !$connection->isWaitingForHead() && !$connection->isReadingBody()) {
                    $connection->closeAfterFlush(); // a whole response queued, still being written
                    $underway++;
                } else {
                    $idle[] = $connection;
                }
                continue;
            }
            $request = $this->core->serving($connection);
            if ($request === null && ($connection->responseStarted || $connection->output->pending() > 0)) {
                if ($connection->endPush()) {
                    $connection->closeAfterFlush(); // an event stream has no end of its own: it ends here
                }
                $underway++; // its handler returned, only its response is left to send: finishUnderway()
                continue;
            }
            $answer = $request?->lastResponse();
            if ($fatal && !($answer instanceof Response && $request?->lastResponseIsError() === true)) {
                $answer = null; // only an error the server made stands (a 504 whose script was ended with a fatal error)
            }
            if ($answer !== null && $request->exitReason() !== '') {
                $why = $request->exitReason();
            }
            if ($request !== null && $connection->responseStarted) {
                $cut++; // a handler in the middle of its own stream: nothing more can be said
                $connection->detach();
                @fclose($connection->socket);
                continue;
            }
            self::flushBlocking($connection, $deadline); // a response before this one, pipelined
            // Answered here: the loop that may run later must not see it any more.
            $connection->detach();
            if ($answer instanceof \Closure) {
                \assert($request !== null);
                $deferred[] = [$connection, $request, $answer];
            } elseif ($answer instanceof Response) {
                \assert($request !== null);
                $last += $this->send($connection, $request, $answer, $deadline) ? 1 : 0;
            } else {
                $answered += ShutdownSocket::answer($connection->socket, $this->core->encoder->dated($this->failed), $deadline) ? 1 : 0;
            }
        }
        [$refused, $dropped] = $this->closeIdle($idle, $deadline);
        if ($underway > 0 && $suspended > 0) {
            // A handler answered with 500 may be suspended in its Fiber, and must not run on: nothing of
            // this process may run again, so the responses under way are cut, as PHP ends the process.
            $underway = 0;
            $cut += $this->cutUnderway();
            $this->finishing = true;
        }
        if ($deferred !== [] || $underway > 0) {
            // Registered now, so it runs after every shutdown function the script registered. A shutdown
            // function that calls exit() makes PHP skip the ones after it, but not the destructors that run
            // next, with the output buffers still open: the object kept here sends the answer then. The
            // responses under way cannot be finished then (their Fibers are gone): that is logged.
            $send = function () use ($deferred): void {
                $this->sendDeferred($deferred);
            };
            if ($deferred !== []) {
                ($this->atExit)($send);
            }
            self::$fallback = new class (function () use ($send): void {
                $send();
                $this->reportUnfinished();
            }) {
                public function __construct(private readonly \Closure $send) {}

                public function __destruct()
                {
                    ($this->send)();
                }
            };
        }
        if ($underway > 0) {
            // Registered last, so the script's own answer and its shutdown functions come first.
            ($this->atExit)(function () use ($fatal): void {
                $this->finishUnderway($fatal ? 'a fatal error' : 'a script exited');
            });
        }
        if (!$fatal && $answered + $underway + $cut + $last + $refused + $dropped + \count($deferred) === 0) {
            return;
        }
        if ((!$fatal || $last > 0) && $this->core->state()->serves()) {
            // A script's exit() ends a worker that was serving (or winding down, one request before its
            // --max-requests): said first, so the supervisor starts the replacement now and does not take the exit
            // for a crash. (A worker already draining was being replaced anyway.)
            $this->core->retiring($why);
        }
        $cause = $fatal ? "fatal error: {$error['message']} in {$error['file']}:{$error['line']}" : 'worker exited';
        // A script's exit() is ordinary PHP: only a 500 or a cut response is an error.
        $level = $fatal || $answered + $cut > 0 ? 'error' : 'info';
        // The parts that happened; a fatal error always says how many got the 500.
        $parts = array_filter([
            $answered > 0 || $fatal ? "answered $answered in-flight request(s) with 500" : '',
            $cut > 0 ? "cut $cut response(s) already under way" : '',
            $underway > 0 ? "finishing $underway response(s) already under way" : '',
            $refused > 0 ? "answered $refused request(s) not yet started with 503" : '',
            $dropped > 0 ? "closed $dropped kept-alive connection(s) with a request not yet started, for the client to send again" : '',
            // A script's own response, or one Kiln made for it before the exit (a 504 past the time limit).
            $last + \count($deferred) > 0 ? 'sent ' . ($last + \count($deferred)) . ' request(s) the response made for them before the exit' : '',
        ], static fn(string $part): bool => $part !== '');
        $this->core->log($level, "$cause; " . implode(', ', $parts));
        $this->core->flushLogs();
    }

    /**
     * Runs the loop once more, with nothing accepted and no new request started, until the responses
     * under way are out or the drain timeout passed; cuts what is left then.
     */
    private function finishUnderway(string $cause): void
    {
        $this->finishing = true;
        $core = $this->core;
        $count = $core->connectionCount();
        if ($count === 0) {
            return;
        }
        $budget = $core->retiring("$cause; finishing $count response(s) under way");
        ($this->retire)();
        if (\function_exists('pcntl_alarm')) {
            // A script's time limit ended with the script: its handler is not called again. The alarm's
            // default action then ends the process, should the loop be stuck past its own timer.
            pcntl_signal(SIGALRM, SIG_DFL);
            pcntl_alarm((int) ceil($budget) + 5);
        }
        $core->finishLastResponses(static function (): void {
            Loop::stop();
        });
        $started = microtime(true);
        $timer = Loop::delay($budget, static function (): void {
            Loop::stop();
        });
        Loop::stop(); // the run() that exit() or the error unwound still counts as running
        try {
            Loop::run();
        } catch (\Throwable $e) {
            $core->log('error', 'Finishing the responses under way failed: ' . $e::class . ': ' . $e->getMessage());
        }
        Loop::cancel($timer);
        if (\function_exists('pcntl_alarm')) {
            pcntl_alarm(0); // the bound was for the loop; what follows is PHP's own shutdown
        }
        $cut = $this->cutUnderway();
        $written = $core->lastResponsesWritten();
        $lost = $count - $cut - $written;
        $core->log($cut + $lost > 0 ? 'error' : 'info', sprintf('finished %d of %d response(s) under way in %.1f s', $written, $count, microtime(true) - $started)
            . ($cut > 0 ? "; cut $cut at the drain timeout ($budget s)" : '')
            . ($lost > 0 ? "; $lost client(s) went away or stopped reading first" : ''));
        $core->flushLogs();
    }

    /** When PHP skipped the finishing (a shutdown function called exit()), says what that cut. */
    private function reportUnfinished(): void
    {
        if ($this->finishing) {
            return;
        }
        $this->finishing = true;
        $cut = $this->cutUnderway();
        if ($cut > 0) {
            $this->core->log('error', "cut $cut response(s) under way: a shutdown function called exit(), so PHP skipped their finishing");
            $this->core->flushLogs();
        }
    }

    /** Closes the connections still in the core (the responses under way); returns how many. */
    private function cutUnderway(): int
    {
        $cut = 0;
        foreach ($this->core->connections() as $connection) {
            // Not detached: that would resume a Fiber waiting for the output to drain. Closed, so counted once.
            if (\is_resource($connection->socket)) {
                $cut++;
                fclose($connection->socket);
            }
        }
        return $cut;
    }

    /** @param list<array{Connection, Request, \Closure(): Response}> $deferred */
    private function sendDeferred(array $deferred): void
    {
        if ($this->deferredSent) {
            return;
        }
        $this->deferredSent = true;
        $deadline = microtime(true) + self::LAST_BUDGET;
        foreach ($deferred as [$connection, $request, $answer]) {
            $error = false;
            try {
                $response = $answer();
            } catch (\Throwable $e) {
                $this->core->log('error', 'Building the response of a script that exited failed: ' . $e::class . ': ' . $e->getMessage());
                $response = ErrorResponse::plain(500);
                $error = true;
            }
            $this->send($connection, $request, $response, $deadline, $error);
        }
        $this->core->flushLogs();
    }

    /** @param bool $error the response is a 500 made here, not the one the request's handler left */
    private function send(Connection $connection, Request $request, Response $response, float $deadline, bool $error = false): bool
    {
        try {
            $response = $request->editedLastResponse($response, $error);
        } catch (\Throwable $e) {
            $this->core->log('error', 'Editing the response of a script that exited failed: ' . $e::class . ': ' . $e->getMessage());
        }
        $body = $response->body();
        $head = $request->head();
        $headRequest = $head->method === 'HEAD';
        $measured = true;
        if ($headRequest && $body === []) {
            $body = ''; // a script's answer to HEAD (SequentialRunner): what it printed is no measure of its GET
            $measured = false;
        } elseif (!\is_string($body)) {
            $response = ErrorResponse::plain(500);
            $body = $response->body();
            \assert(\is_string($body));
        }
        try {
            $length = $headRequest ? $response->declaredLength() ?? ($measured ? \strlen($body) : null) : \strlen($body);
            $bytes = $this->core->encoder->responseHead($response, $length, $head->version, false, $headRequest);
        } catch (\ValueError) {
            $bytes = $this->core->encoder->dated($this->failed);
            $body = '';
        }
        $withBody = !$headRequest && $response->status() !== 204 && $response->status() !== 304;
        $sent = ShutdownSocket::answer($connection->socket, $withBody ? $bytes . $body : $bytes, $deadline);
        $this->core->servedAtShutdown($connection, $request, $response->status(), $sent && $withBody ? \strlen($body) : 0);
        return $sent;
    }

    /**
     * The connections with no request running: a response already fully queued is flushed; a request
     * that came but was never started gets the 503, unless its client sends it again by itself; the rest close
     * without a reset.
     *
     * @param list<Connection> $connections
     * @return array{int, int} the requests answered with 503, and those whose kept-alive connection was closed
     */
    private function closeIdle(array $connections, float $deadline): array
    {
        $open = [];
        $fresh = false;
        foreach ($connections as $connection) {
            if ($connection->state === ConnectionState::Closed || $connection->state === ConnectionState::Detached
                || !\is_resource($connection->socket)) {
                continue;
            }
            self::flushBlocking($connection, $deadline);
            $open[] = $connection;
            $fresh = $fresh || $connection->served === 0;
        }
        $waiting = UnstartedRequests::find($open, $fresh ? min(self::FRESH_WAIT, max(0.0, $deadline - microtime(true))) : 0.0);
        $refused = $dropped = 0;
        foreach ($open as $i => $connection) {
            $unstarted = \array_key_exists($i, $waiting); // its method may be null: not isset()
            // Asked before the connection lets go of its request: whether a `100 Continue` went out.
            $resent = $unstarted && UnstartedRequests::resentOnClose($connection, $waiting[$i], $this->sharedListener);
            $connection->detach(); // answered or closed here: the loop that may run later must not see it
            if ($unstarted && !$resent) {
                $refused += ShutdownSocket::answer($connection->socket, $this->core->encoder->dated($this->unavailable), $deadline) ? 1 : 0;
            } else {
                $dropped += $resent ? 1 : 0;
                ShutdownSocket::close($connection->socket);
            }
        }
        return [$refused, $dropped];
    }

    /** A response already queued on $connection is written out, blocking, until $deadline at most. */
    private static function flushBlocking(Connection $connection, float $deadline): void
    {
        if ($connection->output->pending() > 0 && \is_resource($connection->socket)) {
            stream_set_blocking($connection->socket, true);
            $left = max(0.001, $deadline - microtime(true));
            stream_set_timeout($connection->socket, (int) $left, (int) (fmod($left, 1.0) * 1e6));
            $connection->output->flush();
        }
    }

    /** Some room over what the dying handler took, for logging; never lowers the limit. */
    private static function raiseMemoryLimit(): void
    {
        $limit = ini_get('memory_limit');
        if ($limit === false || $limit === '' || $limit === '-1') {
            return;
        }
        $wanted = memory_get_usage(true) + (16 << 20);
        if (@ini_parse_quantity($limit) < $wanted) {
            @ini_set('memory_limit', (string) $wanted);
        }
    }
}
