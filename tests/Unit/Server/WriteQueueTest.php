<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Server;

use Kiln\Server\WriteQueue;
use PHPUnit\Framework\TestCase;

final class WriteQueueTest extends TestCase
{
    public function testWhatWouldPassTheLimitIsRefusedWholeAndNothingOfItQueued(): void
    {
        $queue = new WriteQueue(10);
        self::assertTrue($queue->push('123456'));
        self::assertFalse($queue->push('12345'));
        self::assertSame(6, $queue->size());
        self::assertTrue($queue->push('1234'));
        self::assertSame(10, $queue->size());
    }

    public function testBytesComeOutInOrderThroughPartialWrites(): void
    {
        [$a, $b] = stream_socket_pair(STREAM_PF_UNIX, STREAM_SOCK_STREAM, STREAM_IPPROTO_IP) ?: self::fail('socket pair');
        stream_set_blocking($a, false);
        stream_set_blocking($b, false);
        $queue = new WriteQueue(64 << 20);
        $expected = '';
        for ($i = 0; $i < 3000; $i++) {
            $chunk = $i % 100 === 0 ? str_repeat(\chr(65 + $i % 26), 200_000) : "chunk $i;";
            $queue->push($chunk);
            $expected .= $chunk;
        }
        $read = '';
        while (!$queue->isEmpty()) {
            self::assertTrue($queue->writeTo($a));
            while (($data = fread($b, 1 << 20)) !== false && $data !== '') {
                $read .= $data;
            }
        }
        while (($data = fread($b, 1 << 20)) !== false && $data !== '') {
            $read .= $data;
        }
        self::assertSame(\strlen($expected), \strlen($read));
        self::assertSame(md5($expected), md5($read));
    }

    public function testAClosedPeerIsReportedAsBroken(): void
    {
        [$a, $b] = stream_socket_pair(STREAM_PF_UNIX, STREAM_SOCK_STREAM, STREAM_IPPROTO_IP) ?: self::fail('socket pair');
        stream_set_blocking($a, false);
        fclose($b);
        $queue = new WriteQueue(100);
        $queue->push('lost');
        self::assertFalse($queue->writeTo($a));
    }
}
