<?php

declare(strict_types=1);

namespace Kiln\Http\Client\Internal;

/** @internal */
enum ParserState
{
    case Idle;
    case Head;
    case FixedBody;
    case ChunkSize;
    case ChunkData;
    case ChunkDataEnd;
    case Trailers;
    case CloseDelimited;
    case Done;
    case Failed;
}
