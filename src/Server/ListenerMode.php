<?php

declare(strict_types=1);

namespace Kiln\Server;

/** How workers get their listening socket; see docs/design/001-shared-listener.md. */
enum ListenerMode: string
{
    /** The supervisor binds once before forking; every worker accepts on the inherited socket. */
    case Shared = 'shared';
    /** Each worker binds its own socket with SO_REUSEPORT; the kernel spreads connections. */
    case ReusePort = 'reuseport';
}
