<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\App\Middleware;

use Kiln\App\HttpErrorException;
use Kiln\App\Middleware\BodyLimit;
use PHPUnit\Framework\TestCase;

final class BodyLimitTest extends TestCase
{
    public function testABodyOfExactlyTheLimitPasses(): void
    {
        $next = Requests::next();
        (new BodyLimit(10))->process(Requests::make('POST', body: str_repeat('x', 10)), $next);
        self::assertSame(1, $next->calls);
    }

    public function testABodyOneByteOverTheLimitIsRefusedWith413(): void
    {
        $next = Requests::next();
        try {
            (new BodyLimit(10))->process(Requests::make('POST', body: str_repeat('x', 11)), $next);
            self::fail('expected HttpErrorException');
        } catch (HttpErrorException $e) {
            self::assertSame(413, $e->status);
        }
        self::assertSame(0, $next->calls);
    }

    public function testTheDeclaredContentLengthDecides(): void
    {
        $this->expectException(HttpErrorException::class);
        $this->expectExceptionCode(413);
        (new BodyLimit(10))->process(Requests::make('POST', headers: ['Content-Length' => '11'], body: 'x'), Requests::next());
    }

    public function testAChunkedBodyIsMeasuredByWhatArrived(): void
    {
        $next = Requests::next();
        (new BodyLimit(5))->process(Requests::make('POST', body: '12345', chunked: true), $next);
        self::assertSame(1, $next->calls);
        $this->expectException(HttpErrorException::class);
        (new BodyLimit(5))->process(Requests::make('POST', body: '123456', chunked: true), $next);
    }

    public function testNoBodyPassesAZeroLimit(): void
    {
        $next = Requests::next();
        (new BodyLimit(0))->process(Requests::make(), $next);
        self::assertSame(1, $next->calls);
    }

    public function testANegativeLimitIsRefusedAtConstruction(): void
    {
        $this->expectException(\ValueError::class);
        new BodyLimit(-1);
    }
}
