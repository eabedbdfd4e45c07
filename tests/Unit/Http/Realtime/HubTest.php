<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Http\Realtime;

use Kiln\Http\Realtime\Hub;
use Kiln\Http\Realtime\Internal\StreamId;
use Kiln\Http\Sse\EventStream;
use Kiln\Loop\Driver\SelectDriver;
use Kiln\Loop\Loop;
use Kiln\Store\InProcessBus;
use Kiln\Store\MemoryTable;
use Kiln\Tests\Support\SseParser;
use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;

final class HubTest extends TestCase
{
    private string $path;

    private MemoryTable $ids;

    private CountingBus $bus;

    /** @var list<\Throwable> */
    private array $errors = [];

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

    private function hub(int $replay = 100, float $keep = 60.0): Hub
    {
        return new Hub($this->bus, $this->ids, $replay, $keep);
    }

    /** Runs the loop until nothing is left to do (deliveries are deferred callbacks). */
    private static function settle(): void
    {
        $guard = Loop::delay(2.0, static fn() => Loop::stop());
        Loop::unreference($guard);
        Loop::run();
        Loop::cancel($guard);
    }

    /** @return list<array{event: string, data: string, id: string}> */
    private static function events(FakeSink $sink): array
    {
        $parser = new SseParser();
        $parser->feed($sink->bytes);
        self::assertTrue($parser->isBetweenEvents(), 'the stream ends between events');
        return $parser->events();
    }

    public function testABroadcastReachesEveryMemberOfTheRoomSenderIncludedOnce(): void
    {
        $hub = $this->hub();
        [$alice, $bob, $carol] = [new FakeMember('a'), new FakeMember('b'), new FakeMember('c')];
        $hub->join('chat', $alice);
        $hub->join('chat', $bob);
        $hub->join('other', $carol);
        $hub->broadcast('chat', 'hello');
        self::assertSame([], $alice->received, 'nothing is delivered inside broadcast()');
        self::settle();
        self::assertSame(['hello'], $alice->received);
        self::assertSame(['hello'], $bob->received);
        self::assertSame([], $carol->received);
    }

    public function testBroadcastsArriveInTheOrderTheyWereSent(): void
    {
        $hub = $this->hub();
        $member = new FakeMember('m');
        $hub->join('r', $member);
        foreach (range(1, 50) as $i) {
            $hub->broadcast('r', "m$i");
        }
        self::settle();
        self::assertSame(array_map(static fn(int $i): string => "m$i", range(1, 50)), $member->received);
    }

    public function testTwoWorkersOnOneBusEachDeliverToTheirOwnMembersOnce(): void
    {
        $bus = new InProcessBus();
        $first = new Hub($bus, $this->ids);
        $second = new Hub($bus, $this->ids);
        [$here, $there] = [new FakeMember('1'), new FakeMember('1')]; // ids are unique per worker only
        $first->join('r', $here);
        $second->join('r', $there);
        $second->broadcast('r', 'from the second');
        self::settle();
        self::assertSame(['from the second'], $here->received);
        self::assertSame(['from the second'], $there->received);
    }

    public function testTheRoomsBusChannelIsHeldOnlyWhileTheWorkerHasMembersThere(): void
    {
        $hub = $this->hub();
        [$a, $b] = [new FakeMember('a'), new FakeMember('b')];
        self::assertSame(0, $this->bus->held('room:r'));
        $hub->join('r', $a);
        $hub->join('r', $b);
        $hub->join('r', $b);
        self::assertSame(1, $this->bus->held('room:r'));
        self::assertSame(2, $hub->members('r'));
        $hub->leave('r', $a);
        self::assertSame(1, $this->bus->held('room:r'));
        $hub->leave('r', $b);
        $hub->leave('r', $b);
        self::assertSame(0, $this->bus->held('room:r'));
        self::assertSame(0, $hub->members('r'));
    }

    public function testLeaveAllTakesAMemberOutOfEveryRoomItIsIn(): void
    {
        $hub = $this->hub();
        $member = new FakeMember('m');
        $stays = new FakeMember('s');
        $hub->join('one', $member);
        $hub->join('two', $member);
        $hub->join('two', $stays);
        self::assertSame(['one', 'two'], $hub->roomsOf($member));
        $hub->leaveAll($member);
        self::assertSame([], $hub->roomsOf($member));
        self::assertSame(0, $this->bus->held('room:one'));
        self::assertSame(1, $this->bus->held('room:two'));
        $hub->broadcast('two', 'after');
        self::settle();
        self::assertSame([], $member->received);
        self::assertSame(['after'], $stays->received);
    }

    public function testAMemberThatThrowsIsReportedAndTheOthersStillReceive(): void
    {
        $hub = $this->hub();
        $hub->join('r', new FakeMember('bad', throws: true));
        $hub->join('r', $good = new FakeMember('good'));
        $hub->broadcast('r', 'x');
        self::settle();
        self::assertSame(['x'], $good->received);
        self::assertSame(['member bad failed'], array_map(static fn(\Throwable $e): string => $e->getMessage(), $this->errors));
        $this->errors = [];
    }

    public function testAPublishedEventReachesEveryStreamOfTheTopicOnEveryWorkerWithOneId(): void
    {
        $bus = new InProcessBus();
        $first = new Hub($bus, $this->ids);
        $second = new Hub($bus, $this->ids);
        $first->subscribe('news', $a = new EventStream());
        $second->subscribe('news', $b = new EventStream());
        $second->subscribe('sport', $c = new EventStream());
        [$sinkA, $sinkB, $sinkC] = [FakeSink::start($a), FakeSink::start($b), FakeSink::start($c)];
        self::assertSame('1', $first->publish('news', "line one\nline two", 'update'));
        self::assertSame('2', $second->publish('news', 'second'));
        self::settle();
        $expected = [
            ['event' => 'update', 'data' => "line one\nline two", 'id' => '1'],
            ['event' => 'message', 'data' => 'second', 'id' => '2'],
        ];
        self::assertSame($expected, self::events($sinkA));
        self::assertSame($expected, self::events($sinkB));
        self::assertSame([], self::events($sinkC));
    }

    public function testAStreamJoinsItsTopicOnlyOnceItsHeadIsOut(): void
    {
        $hub = $this->hub();
        $hub->subscribe('t', $stream = new EventStream());
        self::assertSame(0, $hub->subscribers('t'));
        self::assertSame(0, $this->bus->held('topic:t'), 'a stream whose response never starts holds nothing');
        $sink = FakeSink::start($stream);
        self::assertSame(1, $hub->subscribers('t'));
        $hub->publish('t', 'x');
        self::settle();
        self::assertCount(1, self::events($sink));
    }

    public function testLastEventIdReplaysTheBufferedEventsAfterItInIdOrder(): void
    {
        $hub = $this->hub();
        $hub->subscribe('t', $first = new EventStream());
        FakeSink::start($first);
        foreach (['a', 'b', 'c', 'd'] as $data) {
            $hub->publish('t', $data);
        }
        self::settle();
        $hub->subscribe('t', $again = new EventStream('2'));
        $sink = FakeSink::start($again);
        $hub->publish('t', 'e');
        self::settle();
        self::assertSame(['3', '4', '5'], array_column(self::events($sink), 'id'));
        self::assertSame(['c', 'd', 'e'], array_column(self::events($sink), 'data'));
    }

    public function testEventsPublishedWhileTheBusWasCutReachTheStreamsOnceItFollowsAgain(): void
    {
        $bus = new GappyBus();
        $hub = new Hub($bus, $this->ids);
        $hub->subscribe('t', $stream = new EventStream());
        $sink = FakeSink::start($stream);
        $hub->publish('t', 'a');
        self::settle();
        $bus->cut();
        $hub->publish('t', 'b');
        $hub->publish('t', 'c');
        self::settle();
        self::assertSame(['a'], array_column(self::events($sink), 'data'), 'the bus carried nothing meanwhile');
        $bus->resubscribed();
        $hub->publish('t', 'd');
        self::settle();
        self::assertSame(['a', 'b', 'c', 'd'], array_column(self::events($sink), 'data'), 'the gap was read from the log, each event once');
        self::assertSame(['1', '2', '3', '4'], array_column(self::events($sink), 'id'));
        self::assertSame([], $this->errors);
    }

    /** Redis restarted without its data: the ids begin again at 1, below what the stream was replayed up to. */
    public function testAStreamReplayedUpToAnIdGetsTheEventsOfATopicWhoseIdsBeganAgain(): void
    {
        $bus = new GappyBus();
        $hub = new Hub($bus, $this->ids);
        foreach (['a', 'b', 'c', 'd', 'e'] as $data) {
            $hub->publish('t', $data);
        }
        $hub->subscribe('t', $stream = new EventStream('2'));
        $sink = FakeSink::start($stream);
        self::settle();
        self::assertSame(['3', '4', '5'], array_column(self::events($sink), 'id'), 'replayed up to 5');
        $bus->cut();
        $this->ids->delete('kiln.sse.id:t');
        foreach (range(1, 5) as $id) {
            $this->ids->delete("kiln.sse.event:$id:t");
        }
        $hub->publish('t', 'new 1');
        $bus->resubscribed();
        $hub->publish('t', 'new 2');
        self::settle();
        self::assertSame(['c', 'd', 'e', 'new 1', 'new 2'], array_column(self::events($sink), 'data'), 'nothing of the new sequence is held back');
        self::assertSame(['3', '4', '5', '1', '2'], array_column(self::events($sink), 'id'));
    }

    public function testAnIdOlderThanTheBufferReplaysWhatIsLeft(): void
    {
        $hub = $this->hub(replay: 3);
        $hub->subscribe('t', $first = new EventStream());
        FakeSink::start($first);
        foreach (range(1, 6) as $i) {
            $hub->publish('t', "e$i");
        }
        self::settle();
        $hub->subscribe('t', $again = new EventStream('1'));
        self::assertSame(['4', '5', '6'], array_column(self::events(FakeSink::start($again)), 'id'));
    }

    public function testAWorkerThatNeverFollowedTheTopicReplaysFromTheNodesStore(): void
    {
        $bus = new InProcessBus();
        $first = new Hub($bus, $this->ids);
        $second = new Hub($bus, $this->ids);
        $first->subscribe('t', $stream = new EventStream());
        FakeSink::start($stream);
        foreach (['a', 'b', 'c'] as $data) {
            $first->publish('t', $data, 'x');
        }
        self::settle();
        self::assertFalse($second->follows('t'));
        $second->subscribe('t', $again = new EventStream('1'));
        $sink = FakeSink::start($again);
        $first->publish('t', 'd');
        self::settle();
        self::assertSame(['2', '3', '4'], array_column(self::events($sink), 'id'));
        self::assertSame(['b', 'c', 'd'], array_column(self::events($sink), 'data'));
    }

    public function testAnEventTooLargeForTheStoreIsReplayedFromTheWorkersOwnBuffer(): void
    {
        $hub = $this->hub();
        $large = str_repeat('l', 500); // the test's /dev/shm table holds 106 bytes a value
        $hub->subscribe('t', $stream = new EventStream());
        FakeSink::start($stream);
        $hub->publish('t', 'small');
        $hub->publish('t', $large);
        self::settle();
        $hub->subscribe('t', $again = new EventStream('0'));
        self::assertSame(['small', $large], array_column(self::events(FakeSink::start($again)), 'data'));
    }

    public function testAnEventBothReplayedAndThenDeliveredByTheBusIsSentOnce(): void
    {
        $hub = $this->hub();
        $hub->subscribe('t', $first = new EventStream());
        $firstSink = FakeSink::start($first);
        $hub->publish('t', 'one'); // its bus delivery is still to come
        $hub->subscribe('t', $late = new EventStream('0'));
        $lateSink = FakeSink::start($late); // replayed from the store
        self::settle();
        $hub->publish('t', 'two');
        self::settle();
        self::assertSame(['one', 'two'], array_column(self::events($lateSink), 'data'));
        self::assertSame(['one', 'two'], array_column(self::events($firstSink), 'data'));
    }

    public function testALastEventIdThatIsNotANumberReplaysNothing(): void
    {
        $hub = $this->hub();
        $hub->subscribe('t', $first = new EventStream());
        FakeSink::start($first);
        $hub->publish('t', 'x');
        self::settle();
        $hub->subscribe('t', $again = new EventStream('abc'));
        self::assertSame([], self::events(FakeSink::start($again)));
    }

    public function testAStreamFollowingTwoTopicsReplaysEachFromItsOwnPositionEachEventOnce(): void
    {
        $hub = $this->hub();
        $hub->subscribe('account', $first = new EventStream());
        $hub->subscribe('news', $first);
        $sink = FakeSink::start($first);
        foreach (['a1', 'a2', 'a3'] as $data) {
            $hub->publish('account', $data);
        }
        $hub->publish('news', 'n1');
        $hub->publish('account', 'a4');
        self::settle();
        $seen = self::events($sink);
        self::assertSame(['a1', 'a2', 'a3', 'n1', 'a4'], array_column($seen, 'data'));
        self::assertSame(
            [['account' => 1, 'news' => 0], ['account' => 2, 'news' => 0], ['account' => 3, 'news' => 0], ['account' => 3, 'news' => 1], ['account' => 4, 'news' => 1]],
            array_map(static fn(array $event): array => StreamId::decode($event['id'], ['account', 'news']), $seen),
        );
        $sink->end();
        $hub->publish('news', 'n2 missed');
        $hub->publish('account', 'a5 missed');
        self::settle();

        // Reconnecting after the news event (the account's id is then past the news one's) and after the last:
        // what was missed comes topic by topic, in the order the stream follows them.
        foreach ([3 => ['a4', 'a5 missed', 'n2 missed'], 4 => ['a5 missed', 'n2 missed', 'live after 3']] as $index => $missed) {
            $hub->subscribe('account', $again = new EventStream($seen[$index]['id']));
            $hub->subscribe('news', $again);
            $againSink = FakeSink::start($again);
            $hub->publish('news', "live after $index");
            self::settle();
            self::assertSame([...$missed, "live after $index"], array_column(self::events($againSink), 'data'), "after event $index");
            $againSink->end();
        }
    }

    public function testTheIdsOfAStreamThatFollowsOneTopicAreTheTopicsOwn(): void
    {
        $hub = $this->hub();
        $hub->publish('other', 'numbered apart');
        $hub->subscribe('t', $stream = new EventStream());
        $sink = FakeSink::start($stream);
        $hub->publish('t', 'x');
        $hub->publish('t', 'y');
        self::settle();
        self::assertSame(['1', '2'], array_column(self::events($sink), 'id'));
    }

    public function testATopicSubscribedOnceTheStreamRunsJoinsItsPositionsFromThen(): void
    {
        $hub = $this->hub();
        $hub->publish('late', 'before the stream followed it');
        $hub->subscribe('early', $stream = new EventStream());
        $sink = FakeSink::start($stream);
        $hub->publish('early', 'e1');
        self::settle();
        $hub->subscribe('late', $stream);
        $hub->subscribe('late', $stream); // twice is once
        self::assertSame(1, $hub->subscribers('late'));
        $hub->publish('late', 'l2');
        self::settle();
        $events = self::events($sink);
        self::assertSame(['e1', 'l2'], array_column($events, 'data'));
        self::assertSame('1', $events[0]['id']);
        self::assertSame(['early' => 1, 'late' => 2], StreamId::decode($events[1]['id'], ['early', 'late']));
        $hub->unsubscribe('late', $stream);
        $hub->publish('early', 'e2');
        self::settle();
        self::assertSame('2', self::events($sink)[2]['id'], 'one topic again: its own ids');
    }

    /** @return iterable<string, array{string}> */
    public static function idsThatSayNothingOfTwoTopics(): iterable
    {
        yield 'a plain number' => ['1'];
        yield 'a word' => ['abc'];
        yield 'malformed' => ['1x:2:3'];
        yield 'other topics' => [StreamId::encode(['x' => 1, 'y' => 1])];
        yield 'too long' => [str_repeat('a:1.', 1000) . 'a:1'];
    }

    #[DataProvider('idsThatSayNothingOfTwoTopics')]
    public function testALastEventIdThatNamesNoneOfTheStreamsTopicsReplaysNothingAndTheLiveEventsFollow(string $id): void
    {
        $hub = $this->hub();
        $hub->publish('a', 'old a');
        $hub->publish('b', 'old b');
        self::settle();
        $hub->subscribe('a', $stream = new EventStream($id));
        $hub->subscribe('b', $stream);
        $sink = FakeSink::start($stream);
        $hub->publish('b', 'new b');
        self::settle();
        self::assertSame(['new b'], array_column(self::events($sink), 'data'));
        self::assertSame([], $this->errors);
    }

    public function testAnEndedStreamLeavesItsTopicAndTheTopicIsDroppedAfterTheKeepTime(): void
    {
        $hub = $this->hub(keep: 0.05);
        $hub->subscribe('t', $stream = new EventStream());
        $sink = FakeSink::start($stream);
        self::assertSame(1, $this->bus->held('topic:t'));
        $sink->end();
        self::assertFalse($stream->isOpen());
        self::assertSame(0, $hub->subscribers('t'));
        self::assertTrue($hub->follows('t'), 'kept for clients that reconnect');
        $hub->publish('t', 'while away');
        $wait = Loop::delay(0.2, static fn() => Loop::stop()); // the keep timer does not hold the loop by itself
        Loop::run();
        Loop::cancel($wait);
        self::assertFalse($hub->follows('t'));
        self::assertSame(0, $this->bus->held('topic:t'));
    }

    public function testTopicsKeptWithoutStreamsAreBoundedTheOldestDroppedFirst(): void
    {
        $hub = $this->hub(keep: 60.0);
        foreach (range(0, Hub::KEPT_TOPICS) as $i) {
            $hub->subscribe("t$i", $stream = new EventStream());
            FakeSink::start($stream)->end();
        }
        self::assertFalse($hub->follows('t0'), 'the oldest kept topic was dropped');
        self::assertSame(0, $this->bus->held('topic:t0'));
        self::assertTrue($hub->follows('t1'));
        self::assertTrue($hub->follows('t' . Hub::KEPT_TOPICS));
        $hub->subscribe('t1', $back = new EventStream());
        FakeSink::start($back); // t1 is followed again, no longer merely kept
        foreach (['new', 'newer'] as $topic) { // the first fills the place t1 left, the second is one too many
            $hub->subscribe($topic, $stream = new EventStream());
            FakeSink::start($stream)->end();
        }
        self::assertTrue($hub->follows('t1'));
        self::assertFalse($hub->follows('t2'));
        self::assertTrue($hub->follows('t3'));
    }

    public function testAClientThatReconnectsWithinTheKeepTimeGetsWhatItMissed(): void
    {
        $hub = $this->hub(keep: 30.0);
        $hub->subscribe('t', $stream = new EventStream());
        $sink = FakeSink::start($stream);
        $hub->publish('t', 'seen');
        self::settle();
        $sink->end();
        $hub->publish('t', 'missed');
        self::settle();
        $hub->subscribe('t', $again = new EventStream('1'));
        self::assertSame(['missed'], array_column(self::events(FakeSink::start($again)), 'data'));
    }

    public function testPublishRefusesAnEventNameThatWouldBreakTheFraming(): void
    {
        $this->expectException(\ValueError::class);
        $this->hub()->publish('t', 'x', "a\ndata: forged");
    }

    public function testEventsSentBeforeTheHeadIsOutFollowIt(): void
    {
        $stream = new EventStream();
        self::assertTrue($stream->send('early'));
        $sink = FakeSink::start($stream);
        $stream->send('later');
        self::assertSame(['early', 'later'], array_column(self::events($sink), 'data'));
    }

    public function testOnCloseRunsOnceAndSendingAfterTheEndFails(): void
    {
        $stream = new EventStream();
        $closed = 0;
        $stream->onClose(static function () use (&$closed): void {
            $closed++;
        });
        FakeSink::start($stream);
        $stream->close();
        $stream->close();
        self::assertSame(1, $closed);
        self::assertFalse($stream->send('x'));
    }
}
