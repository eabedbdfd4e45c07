<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Http\Realtime;

use Kiln\Http\Realtime\Hub;
use Kiln\Http\Realtime\Internal\StreamId;
use Kiln\Http\Sse\EventStream;
use Kiln\Store\InProcessBus;
use PHPUnit\Framework\Attributes\DataProvider;

/** What the Hub replays to an event stream that comes back with a Last-Event-ID, and after a gap of the bus. */
final class HubReplayTest extends HubTestCase
{
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
}
