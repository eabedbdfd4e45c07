<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Loop;

use Kiln\Loop\Fifo;
use PHPUnit\Framework\TestCase;

final class FifoTest extends TestCase
{
    public function testItemsComeOutInArrivalOrderAndRemovedOnesNever(): void
    {
        /** @var Fifo<\stdClass> $fifo */
        $fifo = new Fifo();
        $items = [];
        $ids = [];
        foreach (range(0, 9) as $n) {
            $items[$n] = (object) ['n' => $n];
            $ids[$n] = $fifo->push($items[$n]);
        }
        self::assertTrue($fifo->remove($ids[0]));
        self::assertTrue($fifo->remove($ids[4]));
        self::assertFalse($fifo->remove($ids[4]), 'a second remove finds nothing');
        self::assertSame(8, $fifo->count());
        self::assertSame($items[1], $fifo->first());
        self::assertSame($ids[1], $fifo->firstId());
        $out = [];
        while (($item = $fifo->shift()) !== null) {
            $out[] = $item->n;
        }
        self::assertSame([1, 2, 3, 5, 6, 7, 8, 9], $out);
        self::assertTrue($fifo->isEmpty());
        self::assertNull($fifo->first());
        self::assertNull($fifo->firstId());
    }

    public function testIdsAreNeverGivenTwiceAndAShiftedItemCannotBeRemoved(): void
    {
        $fifo = new Fifo(100);
        $a = $fifo->push(new \stdClass());
        $fifo->shift();
        $b = $fifo->push(new \stdClass());
        self::assertSame([100, 101], [$a, $b]);
        self::assertFalse($fifo->has($a));
        self::assertFalse($fifo->remove($a));
        self::assertTrue($fifo->has($b));
        self::assertSame(102, $fifo->nextId());
    }

    public function testAQueueThatIsLongUsedAndRefilledKeepsItsOrder(): void
    {
        /** @var Fifo<\stdClass> $fifo */
        $fifo = new Fifo();
        $expected = 0;
        $next = 0;
        $removed = [];
        // Ten rounds of filling to a thousand and emptying by shifts and removals from the middle: the array
        // under the queue is grown and compacted many times.
        for ($round = 0; $round < 10; $round++) {
            $ids = [];
            for ($i = 0; $i < 1000; $i++) {
                $ids[$next] = $fifo->push((object) ['n' => $next]);
                $next++;
            }
            foreach ($ids as $n => $id) {
                if ($n % 7 === 3) {
                    $fifo->remove($id);
                    $removed[$n] = true;
                }
            }
            while (($item = $fifo->shift()) !== null) {
                while (isset($removed[$expected])) {
                    $expected++;
                }
                self::assertSame($expected, $item->n);
                $expected++;
            }
        }
        self::assertSame(0, $fifo->count());
    }

    public function testDrainEmptiesTheQueueFirstToLast(): void
    {
        $fifo = new Fifo();
        $a = new \stdClass();
        $b = new \stdClass();
        $c = new \stdClass();
        $fifo->push($a);
        $idB = $fifo->push($b);
        $fifo->push($c);
        $fifo->remove($idB);
        self::assertSame([$a, $c], $fifo->drain());
        self::assertTrue($fifo->isEmpty());
        self::assertNull($fifo->shift());
        $d = new \stdClass();
        $fifo->push($d);
        self::assertSame($d, $fifo->shift());
    }
}
