<?php

declare(strict_types=1);

namespace Kiln\App;

use Kiln\App\Handler\ResultConverter;
use Kiln\Http\Response;

/**
 * The return contract of handlers; kept for callers of the first App. The contract is ResultConverter's.
 *
 * @internal
 */
final class Result
{
    public static function toResponse(mixed $result): Response
    {
        return ResultConverter::convert($result);
    }

    public static function status(int $status): Response
    {
        return ResultConverter::status($status);
    }
}
