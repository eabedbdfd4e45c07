<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Redis\Resp;

use Kiln\Redis\Resp\RespEncoder;
use PHPUnit\Framework\TestCase;

final class RespEncoderTest extends TestCase
{
    public function testACommandIsAnArrayOfBulkStrings(): void
    {
        self::assertSame("*3\r\n\$3\r\nSET\r\n\$1\r\nk\r\n\$4\r\na\r\nb\r\n", RespEncoder::command(['SET', 'k', "a\r\nb"]));
    }

    public function testNumbersAreSentAsTheirDecimalText(): void
    {
        self::assertSame("*4\r\n\$4\r\nZADD\r\n\$2\r\n-5\r\n\$3\r\n1.5\r\n\$1\r\n2\r\n", RespEncoder::command(['ZADD', -5, 1.5, 2.0]));
        self::assertSame("*2\r\n\$1\r\nx\r\n\$4\r\n+inf\r\n", RespEncoder::command(['x', INF]));
    }

    public function testAnEmptyCommandIsMisuse(): void
    {
        $this->expectException(\ValueError::class);
        RespEncoder::command([]);
    }
}
