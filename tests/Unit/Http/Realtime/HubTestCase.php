<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Http\Realtime;

use Kiln\Http\Realtime\Hub;
use Kiln\Loop\Driver\SelectDriver;
use Kiln\Loop\Loop;
use Kiln\Store\MemoryTable;
use Kiln\Tests\Support\SseParser;
use PHPUnit\Framework\TestCase;

/** The Hub on an in-process bus and a node table of its own, on a fresh loop for each case. */
abstract class HubTestCase extends TestCase
{
    protected string $path;

    protected MemoryTable $ids;

    protected CountingBus $bus;

    /** @var list<\Throwable> */
    protected array $errors = [];

    protected function setUp(): void
    {
        Loop::set(new SelectDriver());
        Loop::setErrorHandler(function (\Throwable $e): void {
            $this->errors[] = $e;
        });
        $this->path = (string) tempnam(sys_get_temp_dir(), 'kiln-hub-test-');
        @unlink($this->path);
        $this->ids = MemoryTable::file($this->path, buckets: 64, slots: 4);
        $this->bus = new CountingBus();
    }

    /** What the loop reported and a test did not take (an assertion failed in a callback, say) fails that test. */
    protected function assertPostConditions(): void
    {
        self::assertSame([], array_map(static fn(\Throwable $e): string => $e::class . ': ' . $e->getMessage(), $this->errors), 'errors the loop reported');
    }

    protected function tearDown(): void
    {
        Loop::setErrorHandler(null);
        @unlink($this->path);
        // The table keeps its (unlinked) file open: let it go now, not when PHPUnit ends, so servers the
        // suite starts later do not inherit the descriptor.
        unset($this->ids, $this->bus);
        Loop::set(new SelectDriver());
        gc_collect_cycles();
    }

    protected function hub(int $replay = 100, float $keep = 60.0): Hub
    {
        return new Hub($this->bus, $this->ids, $replay, $keep);
    }

    /** Runs the loop until nothing is left to do (deliveries are deferred callbacks). */
    protected static function settle(): void
    {
        $guard = Loop::delay(2.0, static fn() => Loop::stop());
        Loop::unreference($guard);
        Loop::run();
        Loop::cancel($guard);
    }

    /** @return list<array{event: string, data: string, id: string}> */
    protected static function events(FakeSink $sink): array
    {
        $parser = new SseParser();
        $parser->feed($sink->bytes);
        self::assertTrue($parser->isBetweenEvents(), 'the stream ends between events');
        return $parser->events();
    }
}
