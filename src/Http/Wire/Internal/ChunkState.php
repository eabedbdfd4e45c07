<?php

declare(strict_types=1);

namespace Kiln\Http\Wire\Internal;

/** @internal Where the chunked decoder is within a chunked body. */
enum ChunkState
{
    /** Expecting a chunk-size line. */
    case Size;
    /** Inside chunk data. */
    case Data;
    /** Expecting the CRLF that ends chunk data. */
    case DataEnd;
    /** After the last chunk: expecting the trailer section. */
    case Trailer;
}
