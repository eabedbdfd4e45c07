<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\App\Handler;

use Kiln\Http\Request;
use Kiln\Http\Wire\RequestHead;

final class RequestFactory
{
    public static function get(string $path = '/x'): Request
    {
        $head = new RequestHead('GET', $path, '1.1', ['host' => ['x']], $path, '', 'x', RequestHead::BODY_NONE, 0, true, false);
        return new Request($head, '', null, '127.0.0.1', 1234);
    }
}
