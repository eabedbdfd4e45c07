<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Loop;

use Kiln\Loop\Driver;
use Kiln\Loop\Driver\SelectDriver;
use Kiln\Loop\LoopException;

final class SelectDriverTest extends DriverTestCase
{
    protected function createDriver(): Driver
    {
        return new SelectDriver();
    }

    public function testCapacityStaysBelowFdSetSize(): void
    {
        self::assertSame(1024 - 64, $this->loop->capacity());
    }

    /** stream_select() fails for every stream once one is numbered past 1023: said, instead of a loop that spins. */
    public function testAStreamNumberedPastFdSetSizeStopsTheLoopWithTheReason(): void
    {
        $filler = [];
        for ($i = 0; $i < 1100; $i++) {
            $filler[] = fopen('/dev/null', 'r') ?: self::fail('cannot open /dev/null');
        }
        try {
            $pair = stream_socket_pair(STREAM_PF_UNIX, STREAM_SOCK_STREAM, STREAM_IPPROTO_IP) ?: self::fail('no socket pair');
            $this->loop->onReadable($pair[0], static function (): void {});
            $this->loop->delay(1.0, $this->loop->stop(...));
            $this->expectException(LoopException::class);
            $this->expectExceptionMessage('stream_select() cannot watch descriptors numbered 1024 or more');
            $this->loop->run();
        } finally {
            array_map(fclose(...), $filler);
        }
    }
}
