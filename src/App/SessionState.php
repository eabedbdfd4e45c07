<?php

declare(strict_types=1);

namespace Kiln\App;

/** Where a request's Session is in its life. */
enum SessionState
{
    /** Nothing asked for it yet: nothing was read, nothing will be written. */
    case Unread;
    /** Read (or made), and written back when the response leaves. */
    case Open;
    /** destroy() was called: the stored session is removed and the cookie dropped. */
    case Destroyed;
}
