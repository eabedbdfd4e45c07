<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Redis;

use function Kiln\Loop\all;
use function Kiln\Loop\async;
use function Kiln\Loop\delay;

use Kiln\Redis\ConnectException;
use Kiln\Redis\ConnectionLostException;
use Kiln\Redis\RedisClient;
use Kiln\Redis\SyncRedisClient;
use Kiln\Tests\Support\RedisServer;

/** A Redis that dies under load: commands in flight fail clearly, none is sent twice, and the client recovers. */
final class RecoveryTest extends RedisTestCase
{
    public function testKillNineMidPipelineFailsWhatWasInFlightNeverCountsAnIncrTwiceAndRecoversAfterRestart(): void
    {
        $server = RedisServer::start(['--appendonly', 'yes', '--appendfsync', 'always']);
        $client = RedisClient::fromUri($server->uri());
        [$succeeded, $lost, $otherErrors] = self::inLoop(static function () use ($client, $server): array {
            $succeeded = 0;
            $lost = 0;
            $otherErrors = [];
            $workers = [];
            for ($i = 0; $i < 200; $i++) {
                $workers[] = async(static function () use ($client, &$succeeded, &$lost, &$otherErrors): void {
                    while (true) {
                        try {
                            $client->increment('hits');
                            $succeeded++;
                        } catch (ConnectionLostException) {
                            $lost++;

                            return;
                        } catch (\Throwable $e) {
                            $otherErrors[] = $e::class . ': ' . $e->getMessage();

                            return;
                        }
                    }
                });
            }
            while ($succeeded < 2000) {
                delay(0.005);
            }
            $server->kill();
            all($workers);

            return [$succeeded, $lost, $otherErrors];
        }, 60.0);
        self::assertSame([], $otherErrors, 'a Fiber failed other than by the lost connection');
        self::assertGreaterThan(0, $lost, 'commands were in flight when Redis died');
        self::assertSame(200, $lost, 'each Fiber had its INCR in flight and saw it fail');

        self::inLoop(static function () use ($client): void {
            try {
                $client->get('hits');
                self::fail('connected to a dead Redis');
            } catch (ConnectException $e) {
                self::assertStringContainsString('failed', $e->getMessage());
            }
        });
        $server->restart();
        $value = (int) self::inLoop(static fn() => self::eventually(static fn() => $client->get('hits')));
        self::assertGreaterThanOrEqual($succeeded, $value, 'every acknowledged INCR is there');
        self::assertLessThanOrEqual($succeeded + $lost, $value, 'no INCR ran twice: the client did not send any again');
        self::assertSame($value + 1, self::inLoop(static fn() => $client->increment('hits')));
        $client->close();
    }

    public function testAKilledClientConnectionFailsItsCommandsAndTheNextCommandReconnects(): void
    {
        $server = RedisServer::start();
        $client = RedisClient::fromUri($server->uri());
        self::inLoop(static function () use ($client, $server): void {
            $id = $client->command('CLIENT', 'ID');
            self::assertIsInt($id);
            self::assertSame('1', $server->cli('CLIENT', 'KILL', 'ID', (string) $id));
            $fresh = self::eventually(static fn() => $client->command('CLIENT', 'ID'));
            self::assertNotSame($id, $fresh);
        });
    }

    /**
     * The blocking client reads its connection only for a reply: a server that closed it while it was idle (a
     * restart, CLIENT KILL) is found before the next command is written, which goes out, once, on a new connection.
     */
    public function testTheSyncClientSendsItsFirstCommandAfterTheServerClosedItsIdleConnectionOnANewOne(): void
    {
        $server = RedisServer::start();
        $client = SyncRedisClient::fromUri($server->uri());
        self::assertSame('PONG', $client->command('PING'));

        $server->restart();
        self::assertSame(1, $client->command('INCR', 'after-restart'), 'no ConnectionLostException, and INCR ran once');

        $id = $client->command('CLIENT', 'ID');
        self::assertIsInt($id);
        self::assertSame('1', $server->cli('CLIENT', 'KILL', 'ID', (string) $id));
        self::assertSame(2, $client->command('INCR', 'after-restart'), 'no ConnectionLostException after CLIENT KILL');
        self::assertNotSame($id, $client->command('CLIENT', 'ID'));
        $client->close();
    }
}
