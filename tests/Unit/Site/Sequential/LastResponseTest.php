<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Site\Sequential;

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
        $a->setLastResponse($response);
        $b->setLastResponse($builder);
        self::assertSame($response, $a->lastResponse());
        self::assertSame($builder, $b->lastResponse());
        $a->clearLastResponse();
        self::assertNull($a->lastResponse());
        self::assertSame($builder, $b->lastResponse());
        $b->clearLastResponse();
    }

    public function testAnAnswerGoesAwayWithItsRequest(): void
    {
        $request = self::request();
        $request->setLastResponse(Response::text('x'));
        $watch = \WeakReference::create($request);
        unset($request);
        self::assertNull($watch->get(), 'the registry does not keep a finished request alive');
    }

    private static function request(): Request
    {
        return new Request(new RequestHead('GET', '/', '1.1', [], '/', '', 'test', 0, 0, true, false), '', null, '127.0.0.1', 1);
    }
}
