<?php

declare(strict_types=1);

namespace Kiln\Loop\Internal;

/** @internal */
enum WatcherType
{
    case Readable;
    case Writable;
    case Delay;
    case Repeat;
    case Defer;
    case Signal;
}
