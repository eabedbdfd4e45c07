<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Server\Task;

use Kiln\Server\Task\TaskException;
use Kiln\Server\Task\TaskFrames;
use PHPUnit\Framework\TestCase;

final class TaskFramesTest extends TestCase
{
    /** @return iterable<string, array{list<string>}> */
    public static function frames(): iterable
    {
        yield 'one frame' => [['4711']];
        yield 'an empty frame between two' => [['a', '', 'b']];
        yield 'a large frame' => [[str_repeat("x\0y", 70_000)]];
        yield 'binary, with what looks like lengths' => [["\0\0\0\x05abc", "\xff\xff\xff\xff"]];
    }

    /**
     * @param list<string> $payloads
     * @dataProvider frames
     */
    public function testFramesFedWholeComeOutInOrder(array $payloads): void
    {
        $reader = new TaskFrames();
        $reader->feed(implode('', array_map(TaskFrames::encode(...), $payloads)));
        self::assertSame($payloads, self::drain($reader));
        self::assertSame(0, $reader->pending());
    }

    /**
     * @param list<string> $payloads
     * @dataProvider frames
     */
    public function testFramesFedByteByByteComeOutInOrder(array $payloads): void
    {
        $reader = new TaskFrames();
        $bytes = implode('', array_map(TaskFrames::encode(...), $payloads));
        $out = [];
        for ($i = 0, $n = \strlen($bytes); $i < $n; $i++) {
            $reader->feed($bytes[$i]);
            array_push($out, ...self::drain($reader));
        }
        self::assertSame($payloads, $out);
    }

    public function testAnIncompleteFrameWaitsForMoreBytes(): void
    {
        $reader = new TaskFrames();
        $reader->feed(substr(TaskFrames::encode('hello'), 0, 6));
        self::assertNull($reader->next());
        self::assertSame(6, $reader->pending());
    }

    public function testAFrameAnnouncedOverTheLimitIsRefused(): void
    {
        $reader = new TaskFrames(maxFrame: 10);
        $reader->feed(pack('N', 11));
        $this->expectException(TaskException::class);
        $reader->next();
    }

    /** @return list<string> */
    private static function drain(TaskFrames $reader): array
    {
        $frames = [];
        while (($frame = $reader->next()) !== null) {
            $frames[] = $frame;
        }
        return $frames;
    }
}
