<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Bus;

use Kiln\Loop\Loop;
use Kiln\Redis\RedisClient;
use Kiln\Redis\RedisConfig;
use Kiln\Store\BusException;
use Kiln\Store\RedisBus;
use Kiln\Tests\Integration\Redis\RedisTestCase;
use Kiln\Tests\Support\RedisServer;

/**
 * RedisBus against a real redis-server: two buses stand for two processes (workers of two nodes).
 */
final class RedisBusTest extends RedisTestCase
{
    public function testAMessageReachesEverySubscriberOfItsChannelOnEveryBusOnceAndInOrder(): void
    {
        $server = RedisServer::start();
        $a = new RedisBus(RedisConfig::fromUri($server->uri()));
        $b = new RedisBus(RedisConfig::fromUri($server->uri()));
        $client = RedisClient::fromUri($server->uri());
        $got = ['a' => [], 'b' => [], 'other' => []];
        self::inLoop(static function () use ($a, $b, $client, &$got): void {
            $a->subscribe('room:lobby', static function (string $channel, string $payload) use (&$got): void {
                $got['a'][] = "$channel $payload";
            });
            $b->subscribe('room:lobby', static function (string $channel, string $payload) use (&$got): void {
                $got['b'][] = "$channel $payload";
            });
            $b->subscribe('room:other', static function (string $channel, string $payload) use (&$got): void {
                $got['other'][] = $payload;
            });
            self::until(static fn(): bool => $client->command('PUBSUB', 'NUMSUB', RedisBus::PREFIX . 'room:lobby') === [RedisBus::PREFIX . 'room:lobby', 2], 'both buses subscribed');
            for ($i = 1; $i <= 300; $i++) {
                $a->publish('room:lobby', "m$i");
            }
            self::assertSame([], $got['a'], 'nothing is delivered inside publish()');
            self::until(static function () use (&$got): bool {
                return \count($got['a']) >= 300 && \count($got['b']) >= 300;
            }, 'all 300 on both buses');
            $expected = array_map(static fn(int $i): string => "room:lobby m$i", range(1, 300));
            self::assertSame($expected, $got['a'], 'the publisher\'s own subscriber, in order, once');
            self::assertSame($expected, $got['b'], 'the other process, in order, once');
            self::assertSame([], $got['other']);
            $a->close();
            $b->close();
        });
    }

    public function testAChannelIsFollowedAtRedisOnlyWhileThisProcessHasAListenerThere(): void
    {
        $server = RedisServer::start();
        $bus = new RedisBus(RedisConfig::fromUri($server->uri()));
        $client = RedisClient::fromUri($server->uri());
        self::inLoop(static function () use ($bus, $client): void {
            $channel = RedisBus::PREFIX . 'room:7';
            $first = $bus->subscribe('room:7', static function (): void {});
            $second = $bus->subscribe('room:7', static function (): void {});
            self::until(static fn(): bool => $client->command('PUBSUB', 'NUMSUB', $channel) === [$channel, 1], 'one subscription at Redis for two listeners');
            $bus->unsubscribe($first);
            \Kiln\Loop\delay(0.2);
            self::assertSame([$channel, 1], $client->command('PUBSUB', 'NUMSUB', $channel), 'still followed: a listener is left');
            $bus->unsubscribe($second);
            self::until(static fn(): bool => $client->command('PUBSUB', 'NUMSUB', $channel) === [$channel, 0], 'no longer followed');
            self::assertSame(0, $client->publish($channel, 'x'), 'a message there goes to nobody');
            $bus->close();
        });
    }

    public function testWhileRedisIsDownPublishingFailsAsLostAndEverythingRecoversWhenItReturns(): void
    {
        $server = RedisServer::start();
        $logged = [];
        $bus = new RedisBus(RedisConfig::fromUri($server->uri() . '?connect_timeout=0.5&timeout=1'), static function (string $level, string $message) use (&$logged): void {
            $logged[] = "$level: $message";
        });
        $got = [];
        self::inLoop(static function () use ($bus, $server, &$logged, &$got): void {
            $bus->subscribe('t', static function (string $channel, string $payload) use (&$got): void {
                $got[] = $payload;
            });
            self::until(static function () use ($bus, &$got): bool {
                $bus->publish('t', 'before');
                \Kiln\Loop\delay(0.05);
                return \in_array('before', $got, true);
            }, 'the subscription works');

            $server->kill();
            // The bus learns that Redis is gone from a publish that fails; from then on publish() says so.
            $thrown = self::until(static function () use ($bus): ?BusException {
                try {
                    $bus->publish('t', 'during');
                } catch (BusException $e) {
                    return $e;
                }
                \Kiln\Loop\delay(0.05);
                return null;
            }, 'publish() refuses while Redis is down');
            self::assertInstanceOf(BusException::class, $thrown);
            self::assertStringContainsString('Redis is unreachable', $thrown->getMessage());
            self::assertFalse($bus->reachable());
            // Refused publishes are the caller's to report: the log has the one line of Redis going away.
            \Kiln\Loop\delay(1.5);
            try {
                $bus->publish('t', 'during');
            } catch (BusException) {
            }
            $down = array_values(array_filter($logged, static fn(string $line): bool => str_contains($line, 'unreachable')));
            self::assertCount(1, $down, implode("\n", $logged));
            self::assertMatchesRegularExpression('/^warning: node bus \(Redis\): Redis is unreachable \(.+\): \d+ message\(s\) queued here were not confirmed and may be lost/', $down[0]);

            $server->restart();
            self::until(static fn(): bool => $bus->reachable(), 'the bus finds Redis again by itself', 15.0);
            $back = array_values(array_filter($logged, static fn(string $line): bool => str_contains($line, 'Redis answers again')));
            self::assertCount(1, $back, implode("\n", $logged));
            self::assertMatchesRegularExpression('/^info: node bus \(Redis\): Redis answers again, \d+\.\d s after it was found unreachable/', $back[0]);
            $got = [];
            self::until(static function () use ($bus, &$got): bool {
                $bus->publish('t', 'after');
                \Kiln\Loop\delay(0.1);
                return \in_array('after', $got, true);
            }, 'the subscription came back and messages flow again', 15.0);
            $bus->close();
        }, 60.0);
    }

    public function testSubscriptionsThatCannotBeMadeAreLoggedOnceAndOnceWhenTheyAre(): void
    {
        $server = RedisServer::start();
        $logged = [];
        $bus = new RedisBus(RedisConfig::fromUri($server->uri() . '?connect_timeout=0.5&timeout=1'), static function (string $level, string $message) use (&$logged): void {
            $logged[] = "$level: $message";
        });
        $server->kill();
        $got = [];
        $resubscribed = 0;
        $bus->onResubscribed(static function () use (&$resubscribed): void {
            $resubscribed++;
        });
        self::inLoop(static function () use ($bus, $server, &$logged, &$got, &$resubscribed): void {
            // Listeners come and go on one channel (a stream after another) and another channel gets one, all
            // while Redis is away: each channel is retried once a second, and the log says it once.
            foreach (range(1, 3) as $_) {
                $id = $bus->subscribe('late', static function (): void {});
                \Kiln\Loop\delay(0.3);
                $bus->unsubscribe($id);
            }
            $bus->subscribe('late', static function (string $channel, string $payload) use (&$got): void {
                $got[] = $payload;
            });
            $bus->subscribe('other', static function (): void {});
            \Kiln\Loop\delay(2.5); // two retries at least
            self::assertCount(1, $logged, implode("\n", $logged));
            self::assertMatchesRegularExpression("/^warning: node bus \\(Redis\\): subscribing to '(late|other)' failed: .+; each subscription that fails is tried again every second$/", $logged[0]);

            $server->restart();
            self::until(static function () use (&$logged): bool {
                return \in_array('info: node bus (Redis): the subscriptions that failed are made', $logged, true);
            }, 'the line saying the subscriptions are made', 15.0);
            self::until(static function () use ($bus, &$got): bool {
                try {
                    $bus->publish('late', 'now');
                } catch (BusException) {
                }
                \Kiln\Loop\delay(0.1);
                return \in_array('now', $got, true);
            }, 'messages reach the subscription', 15.0);
            \Kiln\Loop\delay(1.5);
            self::assertCount(2, $logged, implode("\n", $logged));
            self::assertSame(2, $resubscribed, 'one catch-up per channel that was retried, not one per retry chain');
            $bus->close();
        }, 60.0);
    }

    public function testARedisThatHangsIsLoggedOnceAsGoneAndOnceAsBack(): void
    {
        $server = RedisServer::start();
        $logged = [];
        // A PING waits up to 5 s and the probe ticks every second: Redis resumes while two PINGs wait for it.
        $bus = new RedisBus(RedisConfig::fromUri($server->uri() . '?connect_timeout=5&timeout=5'), static function (string $level, string $message) use (&$logged): void {
            $logged[] = "$level: $message";
        });
        self::inLoop(static function () use ($bus, $server, &$logged): void {
            $bus->publish('t', 'warm'); // connected
            \Kiln\Loop\delay(0.2);
            posix_kill($server->pid(), SIGSTOP);
            try {
                $bus->publish('t', 'stuck');
                self::until(static fn(): bool => !$bus->reachable(), 'the bus finds Redis gone', 15.0);
                \Kiln\Loop\delay(2.5);
            } finally {
                posix_kill($server->pid(), SIGCONT);
            }
            self::until(static fn(): bool => $bus->reachable(), 'the bus finds Redis again', 15.0);
            \Kiln\Loop\delay(2.0); // any PING still waiting is answered by now
            self::assertSame(1, $bus->recoveries());
            $back = array_values(array_filter($logged, static fn(string $line): bool => str_contains($line, 'Redis answers again')));
            self::assertCount(1, $back, implode("\n", $logged));
            self::assertCount(2, $logged, implode("\n", $logged));
            $bus->close();
        }, 60.0);
    }

    public function testRefusedPublishesAreLoggedOnceAMinuteWithTheirCount(): void
    {
        $server = RedisServer::start();
        $logged = [];
        $bus = new RedisBus(RedisConfig::fromUri($server->uri()), static function (string $level, string $message) use (&$logged): void {
            $logged[] = "$level: $message";
        });
        $server->cli('ACL', 'SETUSER', 'default', 'resetchannels', '&' . RedisBus::PREFIX . 'ok*');
        self::inLoop(static function () use ($bus, &$logged): void {
            foreach (range(1, 4) as $_) {
                $bus->publish('denied', 'x');
                $bus->publish('ok', 'y');
                \Kiln\Loop\delay(0.2);
            }
            self::assertCount(1, $logged, implode("\n", $logged));
            self::assertMatchesRegularExpression('/^warning: node bus \(Redis\): Redis refused 1 PUBLISH: NOPERM/', $logged[0]);
            self::assertTrue($bus->reachable(), 'a refusal is an answer');
            $bus->close();
        }, 30.0);
    }

    /**
     * Polls $check on the loop until it returns something other than false or null.
     *
     * @param \Closure(): mixed $check
     */
    private static function until(\Closure $check, string $what, float $timeout = 10.0): mixed
    {
        $deadline = microtime(true) + $timeout;
        while (true) {
            $result = $check();
            if ($result !== false && $result !== null) {
                return $result;
            }
            if (microtime(true) > $deadline) {
                self::fail("Timed out after $timeout s waiting for: $what");
            }
            \Kiln\Loop\delay(0.05);
        }
    }
}
