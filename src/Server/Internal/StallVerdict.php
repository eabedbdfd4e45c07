<?php

declare(strict_types=1);

namespace Kiln\Server\Internal;

/**
 * What StallWatch found about a worker: its loop stood still past the timeout (report it and ask it what it is
 * doing), or past twice the timeout (end it).
 *
 * @internal
 */
enum StallVerdict
{
    case Stalled;
    case Kill;
}
