<?php

declare(strict_types=1);

namespace Kiln\Db;

enum PoolState
{
    /** Connections are handed out and opened as needed. */
    case Open;
    /** close() was called: idle connections are closed, busy ones when given back, and nothing is handed out. */
    case Closed;
}
