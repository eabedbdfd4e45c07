<?php

declare(strict_types=1);

namespace Kiln\Http\Static;

/** What a Range header asks of a representation. */
enum RangeOutcome
{
    /** No usable Range (absent, malformed, another unit, or refused as abusive): send 200 with everything. */
    case Full;
    /** One or more satisfiable ranges: send 206. */
    case Partial;
    /** Well-formed, but no range overlaps the representation: send 416 with `Content-Range: bytes *\/SIZE`. */
    case Unsatisfiable;
}
