<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Http\Realtime;

use Kiln\Http\Realtime\Hub;
use Kiln\Http\Sse\EventStream;
use Kiln\Loop\Loop;
use Kiln\Store\InProcessBus;

/** The Hub's rooms, and the delivery and lifetime of its event streams. */
final class HubTest extends HubTestCase
{
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
