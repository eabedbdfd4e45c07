<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\WebSocket;

use Kiln\Tests\Support\KilnProcess;
use Kiln\Tests\Support\RawWebSocket;
use PHPUnit\Framework\TestCase;

final class RoomsTest extends TestCase
{
    public function testAMessageToARoomReachesEveryMemberOnBothWorkersOnceAndClosedMembersLeave(): void
    {
        $kiln = KilnProcess::start(IndependentClientsTest::APP, ['--workers=2']);
        try {
            // Members until both workers hold some (the accept balance spreads them; bounded tries).
            $members = [];
            $pids = [];
            for ($i = 0; $i < 40 && (\count(array_unique($pids)) < 2 || \count($members) < 4); $i++) {
                $member = new RawWebSocket($kiln, '/ws/rooms/r1');
                $welcome = json_decode($member->readFrame()['payload'] ?? '', true);
                self::assertIsArray($welcome);
                $members[] = $member;
                self::assertIsInt($welcome['pid']);
                $pids[] = $welcome['pid'];
            }
            self::assertCount(2, array_unique($pids), 'members on both workers');
            $other = new RawWebSocket($kiln, '/ws/rooms/r2');
            $other->readFrame();

            $members[0]->send(RawWebSocket::frame(0x1, 'hello'));
            foreach ($members as $i => $member) {
                self::assertSame('r1: hello', $member->readFrame()['payload'] ?? null, "member $i (worker {$pids[$i]})");
            }
            $members[1]->send(RawWebSocket::frame(0x8, pack('n', 1000)));
            self::assertSame(1000, $members[1]->readUntilClose()[0]);
            $last = \count($members) - 1;
            $members[$last]->send(RawWebSocket::frame(0x1, 'again'));
            foreach ($members as $i => $member) {
                if ($i !== 1) {
                    self::assertSame('r1: again', $member->readFrame()['payload'] ?? null, "member $i");
                }
            }
            // Nothing more came: each got each message once, and the other room got none.
            $members[0]->send(RawWebSocket::frame(0x9, 'marker'));
            self::assertSame(0xA, $members[0]->readFrame()['opcode'] ?? null);
            $other->send(RawWebSocket::frame(0x9, 'marker'));
            self::assertSame(['opcode' => 0xA, 'fin' => true, 'payload' => 'marker'], $other->readFrame());
        } finally {
            $kiln->stop();
        }
    }
}
