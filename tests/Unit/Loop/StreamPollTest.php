<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Loop;

use Kiln\Loop\StreamPoll;
use PHPUnit\Framework\TestCase;

final class StreamPollTest extends TestCase
{
    /** @var list<resource> */
    private array $open = [];

    protected function tearDown(): void
    {
        foreach ($this->open as $stream) {
            \is_resource($stream) && fclose($stream);
        }
        $this->open = [];
    }

    public function testItTellsTheReadableAndWritableKeysAsStreamSelectDoes(): void
    {
        [$a, $b] = $this->pair();
        [$c, $d] = $this->pair();
        $poll = new StreamPoll();
        self::assertNull($poll->wait(['a' => $a, 'c' => $c], [], 0.01), 'nothing to read yet');
        fwrite($b, 'x');
        self::assertSame([['a'], ['aw', 'cw']], $poll->wait(['a' => $a, 'c' => $c], ['aw' => $a, 'cw' => $c], 1.0));
        fclose($d);
        self::assertSame([['a', 'c'], []], $poll->wait(['a' => $a, 'c' => $c], [], 1.0), 'the end of a stream is readable');
    }

    public function testAStreamClosedBetweenWaitsGivesItsDescriptorToTheNextOne(): void
    {
        $poll = new StreamPoll();
        [$a, $b] = $this->pair();
        fwrite($b, 'x');
        self::assertSame([['a'], []], $poll->wait(['a' => $a], [], 1.0));
        fclose($a);
        fclose($b);
        [$e, $f] = $this->pair(); // most likely the descriptors $a and $b had
        self::assertNull($poll->wait(['e' => $e], [], 0.01));
        fwrite($f, 'y');
        self::assertSame([['e'], []], $poll->wait(['e' => $e], [], 1.0));
    }

    /** stream_select() fails for a descriptor numbered 1024 or more (FD_SETSIZE); a supervisor of a few hundred workers has them. */
    public function testADescriptorNumberedPastStreamSelectsLimitIsWatched(): void
    {
        self::assertTrue(StreamPoll::isUnbounded(), 'watching descriptors past 1023 needs ext-ffi: scripts/install-deps.sh installs it');
        for ($i = 0; $i < 1100; $i++) {
            $this->open[] = fopen('/dev/null', 'r') ?: self::fail('cannot open /dev/null');
        }
        [$a, $b] = $this->pair();
        $read = [$a];
        $write = $except = null;
        self::assertFalse(@stream_select($read, $write, $except, 0, 0), 'the descriptor is past FD_SETSIZE');
        fwrite($b, 'x');
        self::assertSame([[0], []], (new StreamPoll())->wait([$a], [], 1.0));
    }

    /** @return array{resource, resource} */
    private function pair(): array
    {
        $pair = stream_socket_pair(STREAM_PF_UNIX, STREAM_SOCK_STREAM, STREAM_IPPROTO_IP) ?: self::fail('no socket pair');
        array_push($this->open, ...$pair);
        return $pair;
    }
}
