<?php

declare(strict_types=1);

namespace Kiln\Http\Static;

/** The verdict of the conditional request headers on a representation. */
enum Precondition
{
    /** Go on and serve it (Range still to be considered). */
    case Proceed;
    /** 304: the client's copy is current (GET and HEAD only). */
    case NotModified;
    /** 412: a precondition the client set does not hold. */
    case Failed;
}
