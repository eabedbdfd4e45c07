<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Http\Realtime;

use Kiln\Http\Realtime\Hub;
use Kiln\Http\Realtime\NumberingBus;
use Kiln\Http\Realtime\ScriptPublisher;
use Kiln\Http\Sse\EventStream;
use Kiln\Loop\Driver\SelectDriver;
use Kiln\Loop\Loop;
use Kiln\Store\BusException;
use Kiln\Store\MemoryTable;
use Kiln\Store\NodeBus;
use Kiln\Tests\Support\SseParser;
use PHPUnit\Framework\TestCase;

/** A script in the worker (sequential tier) publishing through the worker's NumberingBus. */
final class ScriptPublisherTest extends TestCase
{
    private string $path;

    private Hub $hub;

    private CountingBus $bus;

    protected function setUp(): void
    {
        Loop::set(new SelectDriver());
        $this->path = (string) tempnam(sys_get_temp_dir(), 'kiln-script-publisher-');
        @unlink($this->path);
        $this->bus = new CountingBus();
        $this->hub = new Hub($this->bus, MemoryTable::file($this->path, buckets: 64, slots: 4));
        NodeBus::set(new NumberingBus($this->bus, fn(): Hub => $this->hub));
    }

    protected function tearDown(): void
    {
        NodeBus::set(null);
        @unlink($this->path);
        // The Hub's table keeps its (unlinked) file open: let it go now (see HubTest::tearDown()).
        unset($this->hub, $this->bus);
        Loop::set(new SelectDriver());
        gc_collect_cycles();
    }

    private static function settle(): void
    {
        $guard = Loop::delay(2.0, static fn() => Loop::stop());
        Loop::unreference($guard);
        Loop::run();
        Loop::cancel($guard);
    }

    public function testAScriptsEventIsNumberedByTheHubAndReachesTheTopicsStreams(): void
    {
        $raw = [];
        $this->bus->subscribe(ScriptPublisher::EVENTS . 'news', static function (string $channel, string $payload) use (&$raw): void {
            $raw[] = $payload;
        });
        $this->hub->subscribe('news', $stream = new EventStream());
        $sink = FakeSink::start($stream);
        $this->hub->publish('news', 'from a route');
        ScriptPublisher::event('news', "from a\nscript", 'comment');
        ScriptPublisher::event('news', 'unnamed');
        self::settle();
        $parser = new SseParser();
        $parser->feed($sink->bytes);
        self::assertSame([
            ['event' => 'message', 'data' => 'from a route', 'id' => '1'],
            ['event' => 'comment', 'data' => "from a\nscript", 'id' => '2'],
            ['event' => 'message', 'data' => 'unnamed', 'id' => '3'],
        ], $parser->events());
        self::assertSame([], $raw, 'the script\'s own message never reaches the node bus, only the numbered event');
    }

    public function testAScriptsBroadcastReachesTheRoomsMembers(): void
    {
        $this->hub->join('dashboard', $member = new FakeMember('m'));
        ScriptPublisher::broadcast('dashboard', 'new comment');
        self::settle();
        self::assertSame(['new comment'], $member->received);
    }

    public function testABadEventNameIsRefusedInTheScript(): void
    {
        $this->expectException(\ValueError::class);
        ScriptPublisher::event('news', 'x', "a\nb");
    }

    public function testAMalformedEventMessageOnTheBusIsABusException(): void
    {
        $this->expectException(BusException::class);
        NodeBus::get()->publish(ScriptPublisher::EVENTS . 'news', 'no line feed');
    }
}
