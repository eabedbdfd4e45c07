<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Http\Realtime\Internal;

use Kiln\Http\Realtime\Internal\Topic;
use PHPUnit\Framework\TestCase;

final class TopicTest extends TestCase
{
    public function testItKeepsTheLastEventsInIdOrderHoweverTheyArrive(): void
    {
        mt_srand(7);
        foreach ([0, 1, 3, 50] as $size) {
            $topic = new Topic(1, $size);
            $model = [];
            $next = 1;
            for ($step = 0; $step < 2000; $step++) {
                $roll = mt_rand(0, 9);
                // Mostly the next id; sometimes an older one (another worker's publish arriving late), an id
                // skipped ahead (a gap), or one already kept (the same event read twice).
                $id = match (true) {
                    $roll < 6 => $next++,
                    $roll < 8 => max(1, $next - mt_rand(1, 5)),
                    $roll < 9 => $next += mt_rand(2, 4),
                    default => $model === [] ? $next++ : array_rand($model),
                };
                $event = "event $id";
                $topic->remember($id, $event);
                $model[$id] = $event;
                ksort($model);
                while (\count($model) > $size) {
                    unset($model[array_key_first($model)]);
                }
                self::assertSame(array_keys($model), $topic->idsAfter(0), "size $size, step $step");
            }
            foreach ($model as $id => $event) {
                self::assertSame($event, $topic->event($id));
                self::assertTrue($topic->has($id, $event));
            }
        }
    }
}
