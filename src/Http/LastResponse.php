<?php

declare(strict_types=1);

namespace Kiln\Http;

/**
 * The answer for a request whose handler may end the worker process: a classic PHP script calling exit(),
 * or a time limit that ends a script it cannot otherwise stop. A handler sets it before running such code
 * and clears it after; the worker's fatal guard reads it at shutdown, when the process is ending anyway.
 *
 * - A Response is sent as it is, first thing at shutdown (a 504 for a script past its time limit).
 * - A Closure is called last, after the shutdown functions registered meanwhile ran, because PHP runs them
 *   before it sends the response of an exit(): what they print or set belongs to that response.
 * - A fatal error ignores both: the request gets a 500, like every other request in flight.
 *
 * Only a string body can be sent at shutdown; any other body is answered with a 500.
 * Process-wide because the event it covers (the end of the process) is: keyed by Request, so a finished
 * request takes its entry with it.
 */
final class LastResponse
{
    /** @var \WeakMap<Request, Response|\Closure(): Response>|null */
    private static ?\WeakMap $answers = null;

    /** @param Response|\Closure(): Response $answer */
    public static function set(Request $request, Response|\Closure $answer): void
    {
        self::$answers ??= new \WeakMap();
        self::$answers[$request] = $answer;
    }

    public static function clear(Request $request): void
    {
        if (self::$answers !== null) {
            unset(self::$answers[$request]);
        }
    }

    /**
     * @internal read by the fatal guard at shutdown
     * @return Response|\Closure(): Response|null
     */
    public static function of(Request $request): Response|\Closure|null
    {
        return self::$answers[$request] ?? null;
    }
}
