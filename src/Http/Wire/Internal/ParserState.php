<?php

declare(strict_types=1);

namespace Kiln\Http\Wire\Internal;

/** @internal Where the request parser is within the current request. */
enum ParserState
{
    /** Waiting for (the rest of) a request head. */
    case Head;
    /** Inside a Content-Length body. */
    case Length;
    /** Inside a chunked body. */
    case Chunked;
    /** The body is complete; MessageEnd is due. */
    case End;
}
