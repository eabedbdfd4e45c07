<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Http;

use Kiln\Http\ErrorResponse;
use Kiln\Http\Wire\ResponseEncoder;
use PHPUnit\Framework\TestCase;

final class ErrorResponseTest extends TestCase
{
    public function testAnErrorIsAPlainTextPageNamingItsStatus(): void
    {
        $response = ErrorResponse::plain(404);
        self::assertSame(404, $response->status());
        self::assertSame('text/plain; charset=utf-8', $response->header('Content-Type'));
        self::assertSame("404 Not Found\n", $response->body());
    }

    public function testADetailFollowsTheStatusLine(): void
    {
        self::assertSame("400 Bad Request: malformed request line\n", ErrorResponse::plain(400, 'malformed request line')->body());
    }

    public function testExtraHeadersAreKept(): void
    {
        self::assertSame('1', ErrorResponse::plain(503, '', ['Retry-After' => '1'])->header('Retry-After'));
    }

    public function testAStatusThatIsNoErrorIsRefused(): void
    {
        $this->expectException(\ValueError::class);
        ErrorResponse::plain(200);
    }

    public function testEncodedBytesAreFramedByTheEncoderAndCloseTheConnection(): void
    {
        $bytes = ErrorResponse::encoded(new ResponseEncoder(static fn(): int => 0), 503, ['Retry-After' => '1']);
        [$head, $body] = explode("\r\n\r\n", $bytes, 2);
        self::assertSame("503 Service Unavailable\n", $body);
        self::assertSame(
            "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\nRetry-After: 1\r\n"
            . "Server: kiln\r\nContent-Length: 24\r\nConnection: close",
            $head,
        );
    }

    public function testEncodedBytesCarryNoDateSoOnlyA5xxMayBeMadeAhead(): void
    {
        $this->expectException(\ValueError::class);
        ErrorResponse::encoded(new ResponseEncoder(), 404);
    }
}
