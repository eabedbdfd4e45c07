<?php

declare(strict_types=1);

namespace Kiln\Loop\Internal;

/** @internal */
enum SuspensionState
{
    /** Neither suspended nor resumed. */
    case Idle;
    /** suspend() is waiting. */
    case Suspended;
    /** resume()/throw() delivered a result that suspend() has not returned yet. */
    case Resumed;
}
