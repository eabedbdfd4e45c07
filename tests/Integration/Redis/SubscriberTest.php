<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Redis;

use function Kiln\Loop\all;
use function Kiln\Loop\async;

use Kiln\Loop\TimeoutCancellation;
use Kiln\Redis\ConnectException;
use Kiln\Redis\Endpoint;
use Kiln\Redis\RedisClient;
use Kiln\Redis\RedisConfig;
use Kiln\Redis\Subscriber;
use Kiln\Tests\Support\RedisServer;

final class SubscriberTest extends RedisTestCase
{
    public function testChannelsAndPatternsReceiveAndAreResubscribedAfterClientKillTypePubsub(): void
    {
        $server = RedisServer::start();
        $client = RedisClient::fromUri($server->uri());
        $subscriber = Subscriber::fromUri($server->uri());
        $received = [];
        $resubscribed = 0;
        self::inLoop(static function () use ($client, $subscriber, $server, &$received, &$resubscribed): void {
            $subscriber->subscribe('news', static function (string $message, string $channel) use (&$received): void {
                $received[] = "$channel: $message";
            });
            $subscriber->psubscribe('room.*', static function (string $message, string $channel, string $pattern) use (&$received): void {
                $received[] = "$pattern $channel: $message";
            });
            $subscriber->onResubscribed(static function () use (&$resubscribed): void {
                $resubscribed++;
            });
            self::assertSame(1, $client->publish('news', 'first'));
            self::assertSame(1, $client->publish('room.7', 'hello'));
            self::waitFor(static function () use (&$received): bool {
                return \count($received) === 2;
            }, 'both messages received');
            self::assertSame(['news: first', 'room.* room.7: hello'], $received);

            self::assertSame('1', $server->cli('CLIENT', 'KILL', 'TYPE', 'pubsub'));
            self::waitFor(static function () use (&$resubscribed): bool {
                return $resubscribed === 1;
            }, 'resubscribed once');
            self::waitFor(static fn(): bool => $client->command('PUBSUB', 'NUMSUB', 'news') === ['news', 1] && $client->command('PUBSUB', 'NUMPAT') === 1, 'the server counts the subscriptions again');
            self::assertSame(1, $client->publish('news', 'second'));
            self::assertSame(1, $client->publish('room.9', 'again'));
            self::waitFor(static function () use (&$received): bool {
                return \count($received) === 4;
            }, 'both messages received after the resubscription');
            self::assertSame(['news: second', 'room.* room.9: again'], \array_slice($received, 2));

            $subscriber->unsubscribe('news');
            self::waitFor(static fn(): bool => $client->publish('news', 'gone') === 0, 'nobody subscribed to news');
            $subscriber->close();
        });
    }

    public function testASubscribeWhileTheReconnectIsPendingSubscribesEverythingAgainAndTwoAtOnceShareOneConnection(): void
    {
        $server = RedisServer::start();
        $client = RedisClient::fromUri($server->uri());
        $subscriber = new Subscriber(new RedisConfig([new Endpoint('127.0.0.1', $server->port)], connectTimeout: 1.0, backoffInitial: 2.0, backoffMax: 2.0));
        $received = [];
        $resubscribed = 0;
        $handler = static function (string $message, string $channel) use (&$received): void {
            $received[] = "$channel:$message";
        };
        self::inLoop(static function () use ($client, $subscriber, $server, $handler, &$received, &$resubscribed): void {
            $subscriber->onResubscribed(static function () use (&$resubscribed): void {
                $resubscribed++;
            });
            all([async(static fn() => $subscriber->subscribe('one', $handler)), async(static fn() => $subscriber->subscribe('two', $handler))]);
            self::assertSame(['one', 1, 'two', 1], $client->command('PUBSUB', 'NUMSUB', 'one', 'two'));
            self::assertSame('1', $server->cli('CLIENT', 'KILL', 'TYPE', 'pubsub'), 'both channels on one connection');
            \Kiln\Loop\delay(0.1);
            self::assertSame(1, $resubscribed, 'the first reconnect is at once');
            $server->kill();
            \Kiln\Loop\delay(0.2); // the reconnect at once fails; the next waits 1 to 2 s
            $server->restart();
            $subscriber->subscribe('three', $handler);
            self::assertSame(2, $resubscribed, 'the subscribe reconnected at once, for every channel');
            foreach (['one', 'two', 'three'] as $channel) {
                self::assertSame(1, $client->publish($channel, 'x'));
            }
            self::waitFor(static function () use (&$received): bool {
                return \count($received) === 3;
            }, 'three messages');
            \Kiln\Loop\delay(2.5);
            self::assertSame(2, $resubscribed, 'the pending reconnect was called off');
            self::assertSame(['one', 1, 'two', 1, 'three', 1], $client->command('PUBSUB', 'NUMSUB', 'one', 'two', 'three'));
            $subscriber->close();
        });
        sort($received);
        self::assertSame(['one:x', 'three:x', 'two:x'], $received);
    }

    public function testASubscribeWithoutRedisFailsClearlyAndWorksOnceRedisIsThere(): void
    {
        $port = RedisServer::freePort();
        $subscriber = Subscriber::fromUri("redis://127.0.0.1:$port");
        $received = [];
        self::inLoop(static function () use ($subscriber, $port, &$received): void {
            try {
                $subscriber->subscribe('a', static function (string $message) use (&$received): void {
                    $received[] = "a:$message";
                });
                self::fail('subscribed to nothing');
            } catch (ConnectException $e) {
                self::assertStringContainsString("127.0.0.1:$port", $e->getMessage());
            }
            $server = RedisServer::start(port: $port);
            $subscriber->subscribe('b', static function (string $message) use (&$received): void {
                $received[] = "b:$message";
            });
            $client = RedisClient::fromUri($server->uri());
            self::assertSame(0, $client->publish('a', 'x'), 'the failed subscription was not kept');
            self::assertSame(1, $client->publish('b', 'y'));
            self::waitFor(static function () use (&$received): bool {
                return $received === ['b:y'];
            }, 'the message on b');
            $subscriber->close();
            $server->stop();
        });
    }

    public function testASubscriberWhosePingGoesUnansweredReconnects(): void
    {
        $server = RedisServer::start();
        $subscriber = Subscriber::fromUri($server->uri('?health_check=0.2'));
        $client = RedisClient::fromUri($server->uri());
        $received = [];
        $resubscribed = 0;
        self::inLoop(static function () use ($server, $subscriber, $client, &$received, &$resubscribed): void {
            $subscriber->onResubscribed(static function () use (&$resubscribed): void {
                $resubscribed++;
            });
            $subscriber->subscribe('news', static function (string $message) use (&$received): void {
                $received[] = $message;
            });
            \Kiln\Loop\delay(0.5);
            self::assertSame([0], [$resubscribed], 'answered PINGs keep the connection');
            self::assertSame('OK', $server->cli('CLIENT', 'PAUSE', '1500', 'ALL'));
            self::waitFor(static function () use (&$resubscribed): bool {
                return $resubscribed >= 1;
            }, 'the subscriber gave up on the silent connection and reconnected');
            self::waitFor(static function () use ($client, &$received): bool {
                $client->publish('news', 'after the pause');

                return \in_array('after the pause', $received, true);
            }, 'a message after the pause');
            $subscriber->close();
        });
    }

    public function testShardChannelsWorkOnASingleServer(): void
    {
        $server = RedisServer::start();
        $client = RedisClient::fromUri($server->uri());
        $subscriber = Subscriber::fromUri($server->uri('?protocol=3'));
        $received = [];
        self::inLoop(static function () use ($client, $subscriber, &$received): void {
            $subscriber->ssubscribe('orders', static function (string $message) use (&$received): void {
                $received[] = $message;
            });
            self::assertSame(1, $client->command('SPUBLISH', 'orders', 'o-1'));
            self::waitFor(static function () use (&$received): bool {
                return $received === ['o-1'];
            }, 'the shard message received');
            $subscriber->close();
        });
    }

    /** @param \Closure(): bool $condition */
    private static function waitFor(\Closure $condition, string $what, float $timeout = 10.0): void
    {
        $cancellation = new TimeoutCancellation($timeout, "Waited in vain: $what");
        while (!$condition()) {
            $cancellation->throwIfRequested();
            \Kiln\Loop\delay(0.01);
        }
    }
}
