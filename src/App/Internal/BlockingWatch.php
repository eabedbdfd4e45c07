<?php

declare(strict_types=1);

namespace Kiln\App\Internal;

use Kiln\App\App;
use Kiln\Http\Request;
use Kiln\Loop\Loop;

/**
 * Warns once when a route's handler keeps its worker's loop to itself for more than $threshold seconds: from its
 * start until it first suspends (awaits I/O, a timer, a query of Kiln\Db) or returns. That is where a
 * blocking call (PDO, mysqli, sleep(), a file_get_contents() of a URL) shows. The time is measured up to the
 * moment the loop gets control back (a deferred callback), so it is an upper bound: it includes whatever
 * else ran in the same loop turn, which is itself time the loop was not serving.
 *
 * @internal
 */
final class BlockingWatch
{
    private bool $warned = false;

    /** @param \Closure(string): void $log */
    public function __construct(
        private readonly float $threshold,
        private readonly \Closure $log,
    ) {}

    /** Called as a handler starts; returns what to call when it returns (null: nothing to watch). */
    public function start(Request $request): ?\Closure
    {
        if ($this->warned || \Fiber::getCurrent() === null) {
            return null; // warned already, or not on the coroutine tier
        }
        $started = hrtime(true);
        $done = false;
        Loop::defer(function () use ($started, $request, &$done): void {
            if (!$done) {
                $done = true;
                $this->check($started, $request);
            }
        });

        return function () use ($started, $request, &$done): void {
            if (!$done) {
                $done = true;
                $this->check($started, $request);
            }
        };
    }

    private function check(int $started, Request $request): void
    {
        $seconds = (hrtime(true) - $started) / 1e9;
        // Only routes run on the coroutine tier; a page of the site (sequential tier) may block by design.
        if ($this->warned || $seconds <= $this->threshold || $request->attribute(App::ROUTE_PARAMS) === null) {
            return;
        }
        $this->warned = true;
        ($this->log)(\sprintf(
            '%s %s kept the worker busy for %d ms without yielding: a blocking call (PDO, mysqli, sleep(), a URL read with file_get_contents()) in a coroutine handler stops every request of the worker meanwhile. Use Kiln\Db and the Loop functions, or serve the route on the sequential tier (docs/databases.md). This warning is given once per worker.',
            $request->method(),
            $request->path(),
            (int) round($seconds * 1000),
        ));
    }
}
