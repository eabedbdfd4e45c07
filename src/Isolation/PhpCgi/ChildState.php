<?php

declare(strict_types=1);

namespace Kiln\Isolation\PhpCgi;

/** A php-cgi child as its worker sees it. */
enum ChildState: string
{
    /** Asked for (or being replaced): the supervisor will say when it listens. */
    case Starting = 'starting';
    /** Listening, no request: may take the next one. */
    case Idle = 'idle';
    /** Running one request. */
    case Busy = 'busy';
    /** Done (max requests, a timeout): the supervisor was asked for a fresh one in its place. */
    case Retiring = 'retiring';
    /** Died early or could not start; the supervisor retries after a backoff. */
    case Failed = 'failed';
}
