<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Site\Sequential;

use Kiln\Http\LastResponse;
use Kiln\Http\Request;
use Kiln\Http\Response;
use Kiln\Http\Wire\RequestHead;
use PHPUnit\Framework\TestCase;

final class LastResponseTest extends TestCase
{
    public function testAnAnswerIsKeptPerRequestUntilCleared(): void
    {
        [$a, $b] = [self::request(), self::request()];
        $response = Response::text('late', 504);
        $builder = static fn(): Response => Response::text('built');
        LastResponse::set($a, $response);
        LastResponse::set($b, $builder);
        self::assertSame($response, LastResponse::of($a));
        self::assertSame($builder, LastResponse::of($b));
        LastResponse::clear($a);
        self::assertNull(LastResponse::of($a));
        self::assertSame($builder, LastResponse::of($b));
        LastResponse::clear($b);
    }

    public function testAnAnswerGoesAwayWithItsRequest(): void
    {
        $request = self::request();
        LastResponse::set($request, Response::text('x'));
        $watch = \WeakReference::create($request);
        unset($request);
        self::assertNull($watch->get(), 'the registry does not keep a finished request alive');
    }

    private static function request(): Request
    {
        return new Request(new RequestHead('GET', '/', '1.1', [], '/', '', 'test', 0, 0, true, false), '', null, '127.0.0.1', 1);
    }
}
