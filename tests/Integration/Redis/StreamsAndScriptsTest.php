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
        $killer = self::killWhenBlocked($id, $server->port);
        try {
            $client->pipeline([['INCR', 'c'], ['BLPOP', 'nothing', '20']]);
            self::fail('a pipeline on a connection killed under it succeeded');
        } catch (ConnectionLostException) {
        } finally {
            proc_close($killer);
        }
        self::assertSame('2', $server->cli('-n', '2', 'GET', 'c'), 'the INCR on the dead connection ran and was not sent again');
        self::assertSame(3, $client->command('INCR', 'c'), 'the next command reconnected');
        $script = new Script("return redis.call('INCRBY', KEYS[1], ARGV[1])");
        self::assertSame(13, $script->run($client, ['c'], [10]), 'scripts run on the synchronous client too');
        $client->close();
    }

    /**
     * Kills connection $id (of the server on $port, password pw) once it waits in BLPOP, from another process:
     * the blocking client cannot, waiting for its reply. Gives up after 10 s.
     *
     * @return resource
     */
    private static function killWhenBlocked(int $id, int $port): mixed
    {
        $cli = "redis-cli -h 127.0.0.1 -p $port --no-auth-warning -a pw";
        $script = "for i in \$(seq 200); do $cli CLIENT LIST ID $id | grep -q 'cmd=blpop' && exec $cli CLIENT KILL ID $id; sleep 0.05; done";
        $process = proc_open(['sh', '-c', $script], [0 => ['file', '/dev/null', 'r'], 1 => ['file', '/dev/null', 'w'], 2 => ['file', '/dev/null', 'w']], $pipes);
        self::assertIsResource($process);

        return $process;
    }
}
