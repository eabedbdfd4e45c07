<?php

declare(strict_types=1);

namespace Kiln\Server;

/**
 * A Service that can say what it is working on: the worker asks when its event loop stands still
 * (--stall-timeout, docs/design/028), from a signal handler that may run between any two instructions of
 * the service's own code.
 *
 * Contract: inFlight() MUST only read (no I/O, no loop calls, no allocation beyond the answer), MUST NOT
 * throw, and SHOULD be cheap; the service MUST NOT keep extra bookkeeping per request for it.
 */
interface InFlight
{
    /** @return list<string> what is being handled now, one line each (`GET /report?year=2026`) */
    public function inFlight(): array;
}
