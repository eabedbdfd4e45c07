<?php

declare(strict_types=1);

namespace Kiln\Redis\Resp;

/** What the parser accepts before it gives up with a ProtocolException. */
final class RespLimits
{
    public function __construct(
        /** Aggregates inside aggregates (array, map, set, push, attribute). */
        public readonly int $maxDepth = 32,
        /** One bulk, blob error or verbatim string; Redis's own proto-max-bulk-len is 512 MiB. */
        public readonly int $maxBulkBytes = 512 * 1024 * 1024,
        /** Elements of one aggregate (a map counts its pairs). */
        public readonly int $maxElements = 16 * 1024 * 1024,
        /** A line: simple string, simple error, a number, a length. */
        public readonly int $maxLineBytes = 64 * 1024,
    ) {
        if ($maxDepth < 1 || $maxBulkBytes < 0 || $maxElements < 0 || $maxLineBytes < 16) {
            throw new \ValueError('RespLimits need maxDepth >= 1, maxBulkBytes >= 0, maxElements >= 0, maxLineBytes >= 16');
        }
    }
}
