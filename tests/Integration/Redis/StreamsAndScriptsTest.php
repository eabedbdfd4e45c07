<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Redis;

use Kiln\Redis\ConnectionLostException;
use Kiln\Redis\ErrorReplyException;
use Kiln\Redis\RedisClient;
use Kiln\Redis\Script;
use Kiln\Redis\SyncRedisClient;
use Kiln\Tests\Support\RedisServer;

final class StreamsAndScriptsTest extends RedisTestCase
{
    public function testAnEntryNotAcknowledgedIsClaimedByAnotherConsumerAndThenAcknowledged(): void
    {
        $server = RedisServer::start();
        $client = RedisClient::fromUri($server->uri());
        self::inLoop(static function () use ($client): void {
            $streams = $client->streams();
            self::assertTrue($streams->createGroup('jobs', 'workers'));
            self::assertFalse($streams->createGroup('jobs', 'workers'), 'the group exists');
            $first = $streams->add('jobs', ['task' => 'resize', 'n' => 1]);
            $second = $streams->add('jobs', ['task' => 'mail', 'n' => 2], maxLength: 1000);
            $read = $streams->readGroup('workers', 'alice', ['jobs' => '>'], count: 10);
            self::assertSame([$first, $second], array_map(static fn($e) => $e->id, $read['jobs']));
            self::assertSame(['task' => 'resize', 'n' => '1'], $read['jobs'][0]->fields);
            self::assertSame(1, $streams->ack('jobs', 'workers', $first));

            $claimed = $streams->autoClaim('jobs', 'workers', 'bob', minIdle: 0.0);
            self::assertSame([$second], array_map(static fn($e) => $e->id, $claimed['entries']), 'alice never acknowledged the second');
            self::assertSame('0-0', $claimed['next']);
            self::assertSame(1, $streams->ack('jobs', 'workers', $second));
            self::assertSame([], $streams->readGroup('workers', 'bob', ['jobs' => '0'])['jobs']);
            self::assertSame([], $streams->readGroup('workers', 'bob', ['jobs' => '>'], block: 0.05), 'nothing new after a short block');
        });
    }

    public function testAScriptRunsByEvalshaAndIsSentInFullOnlyAfterNoscript(): void
    {
        $server = RedisServer::start();
        $client = RedisClient::fromUri($server->uri());
        $script = new Script("return redis.call('INCRBY', KEYS[1], ARGV[1])");
        self::inLoop(static function () use ($client, $script): void {
            self::assertSame(5, $client->evalScript($script, ['n'], [5]));
            self::assertSame(8, $client->evalScript($script, ['n'], [3]));
            $client->command('SCRIPT', 'FLUSH');
            self::assertSame(9, $client->evalScript($script, ['n'], [1]));
        });
        $stats = $server->cli('INFO', 'commandstats');
        self::assertMatchesRegularExpression('/cmdstat_eval:calls=2,/', $stats, 'EVAL twice: the first time and after the flush');
        self::assertMatchesRegularExpression('/cmdstat_evalsha:calls=3,/', $stats);
    }

    public function testTheSynchronousClientUsesTheSameGreetingAndFailsALostCommandWithoutResending(): void
    {
        $server = RedisServer::start(['--requirepass', 'pw'], 'pw');
        $client = SyncRedisClient::fromUri($server->uri('/2'));
        self::assertSame('OK', $client->command('SET', 'sync', 'yes'));
        self::assertSame(['yes', 1], array_slice($client->pipeline([['GET', 'sync'], ['INCR', 'c'], ['INCR', 'sync']]), 0, 2));
        self::assertSame('yes', $server->cli('-n', '2', 'GET', 'sync'));
        try {
            $client->command('INCR', 'sync');
            self::fail('INCR of a string succeeded');
        } catch (ErrorReplyException $e) {
            self::assertSame('ERR', $e->code());
        }
        $id = $client->command('CLIENT', 'ID');
        self::assertIsInt($id);
        $server->cli('CLIENT', 'KILL', 'ID', (string) $id);
        try {
            $client->command('INCR', 'c');
            self::fail('a command on a killed connection succeeded');
        } catch (ConnectionLostException) {
        }
        self::assertSame('1', $server->cli('-n', '2', 'GET', 'c'), 'the INCR on the dead connection was not sent again');
        self::assertSame(2, $client->command('INCR', 'c'), 'the next command reconnected');
        $script = new Script("return redis.call('INCRBY', KEYS[1], ARGV[1])");
        self::assertSame(12, $script->run($client, ['c'], [10]), 'scripts run on the synchronous client too');
        $client->close();
    }
}
