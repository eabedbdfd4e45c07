<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Server;

use Kiln\Server\AcceptBalance;
use PHPUnit\Framework\TestCase;

/**
 * The table two real processes share: the worker that accepted more lately yields to its sibling, never
 * to itself, to a sibling that withdrew, or to one that died.
 */
final class AcceptBalanceTest extends TestCase
{
    protected function setUp(): void
    {
        // Both come with Debian's php8.2-cli (php8.2-common ships shmop): without shmop there is no table to test.
        self::assertTrue(\extension_loaded('shmop'), 'the accept balance needs ext-shmop');
        self::assertTrue(\extension_loaded('pcntl'), 'Kiln needs ext-pcntl');
    }

    public function testNothingToBalanceWithOneWorker(): void
    {
        self::assertNull(AcceptBalance::create(1));
    }

    public function testAWorkerAloneNeverYields(): void
    {
        $balance = AcceptBalance::create(2);
        self::assertNotNull($balance);
        $balance->join(1);
        for ($i = 0; $i < 10; $i++) {
            $balance->accepted(1);
        }
        self::assertFalse($balance->shouldYield(1), 'no sibling has joined');
    }

    public function testTheBusierWorkerYieldsToALiveSiblingUntilItWithdrawsOrDies(): void
    {
        $balance = AcceptBalance::create(2);
        self::assertNotNull($balance);
        $balance->join(1);
        [$sibling, $tell] = $this->sibling($balance);

        $balance->accepted(1);
        self::assertFalse($balance->shouldYield(1), '1 against 0: within the margin');
        $balance->accepted(1);
        $balance->accepted(1);
        self::assertTrue($balance->shouldYield(1), 'about 3 against 0 (a count fades a little even in microseconds)');
        $lastBefore = $balance->siblingsLastAccepted(1);

        $tell('accept 3');
        self::assertFalse($balance->shouldYield(1), '3 against 3');
        self::assertGreaterThan($lastBefore, $balance->siblingsLastAccepted(1), 'the sibling was seen accepting');
        for ($i = 0; $i < 4; $i++) {
            $balance->accepted(1);
        }
        self::assertTrue($balance->shouldYield(1), '7 against 3');

        $tell('withdraw');
        self::assertFalse($balance->shouldYield(1), 'a sibling that withdrew is not yielded to');

        $tell('join');
        self::assertTrue($balance->shouldYield(1), 'it joined again with nothing accepted');
        $tell('exit');
        pcntl_waitpid($sibling, $status);
        self::assertFalse($balance->shouldYield(1), 'a dead sibling is not yielded to');
    }

    public function testCountsFadeSoABurstIsWeighedOnItsOwn(): void
    {
        $balance = AcceptBalance::create(2);
        self::assertNotNull($balance);
        $balance->join(1);
        [$sibling, $tell] = $this->sibling($balance);
        for ($i = 0; $i < 20; $i++) {
            $balance->accepted(1);
        }
        self::assertTrue($balance->shouldYield(1));
        usleep(1_500_000); // six time constants: 20 fades below 0.1
        self::assertFalse($balance->shouldYield(1), 'an old burst no longer counts');
        $tell('exit');
        pcntl_waitpid($sibling, $status);
    }

    /**
     * A forked process in slot 2 that joins, then acts on each line it is told and answers "ok".
     *
     * @return array{int, \Closure(string): void}
     */
    private function sibling(AcceptBalance $balance): array
    {
        $pair = stream_socket_pair(STREAM_PF_UNIX, STREAM_SOCK_STREAM, STREAM_IPPROTO_IP);
        self::assertIsArray($pair);
        [$mine, $theirs] = $pair;
        $pid = pcntl_fork();
        self::assertNotSame(-1, $pid);
        if ($pid === 0) {
            fclose($mine);
            $balance->join(2);
            fwrite($theirs, "ok\n");
            while (($line = fgets($theirs)) !== false) {
                $command = trim($line);
                match (true) {
                    $command === 'withdraw' => $balance->withdraw(2),
                    $command === 'join' => $balance->join(2),
                    str_starts_with($command, 'accept ') => array_map(
                        static fn() => $balance->accepted(2),
                        range(1, (int) substr($command, 7)),
                    ),
                    default => posix_kill((int) getmypid(), SIGKILL), // exit without PHPUnit's shutdown
                };
                fwrite($theirs, "ok\n");
            }
            posix_kill((int) getmypid(), SIGKILL);
        }
        fclose($theirs);
        stream_set_timeout($mine, 5);
        self::assertSame("ok\n", fgets($mine), 'the sibling joined');
        $tell = static function (string $command) use ($mine): void {
            fwrite($mine, "$command\n");
            if ($command !== 'exit') {
                self::assertSame("ok\n", fgets($mine), "the sibling did '$command'");
            }
        };
        return [$pid, $tell];
    }
}
