<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Redis;

use function Kiln\Loop\all;
use function Kiln\Loop\async;

use Kiln\Redis\CommandTimeoutException;
use Kiln\Redis\ConnectException;
use Kiln\Redis\ConnectionLostException;
use Kiln\Redis\ErrorReplyException;
use Kiln\Redis\RedisClient;
use Kiln\Redis\RedisConfig;
use Kiln\Redis\Resp\ErrorReply;
use Kiln\Redis\SyncRedisClient;
use Kiln\Tests\Support\RedisServer;

/** RedisClient against a real redis-server: pipelining, greeting, timeouts, TLS, loss and recovery. */
final class RedisClientTest extends RedisTestCase
{
    public function testTwoHundredFibersPipelineOnOneConnectionAndEachGetsItsOwnReply(): void
    {
        $server = RedisServer::start();
        $client = RedisClient::fromUri($server->uri());
        $results = self::inLoop(static function () use ($client): array {
            $futures = [];
            for ($i = 0; $i < 200; $i++) {
                $futures[$i] = async(static function () use ($client, $i): array {
                    $client->set("key:$i", "value:$i");
                    $value = $client->get("key:$i");
                    $count = $client->increment('counter');

                    return [$value, $count, $client->command('CLIENT', 'ID')];
                });
            }

            return all($futures);
        });
        $client->close();
        $counts = [];
        foreach ($results as $i => [$value, $count, $id]) {
            self::assertSame("value:$i", $value);
            $counts[] = $count;
        }
        sort($counts);
        self::assertSame(range(1, 200), $counts, 'every INCR counted once, every Fiber got its own reply');
        self::assertCount(1, array_unique(array_map(static fn(mixed $id): string => \is_int($id) ? (string) $id : '?', array_column($results, 2))), 'all on one connection');
        self::assertSame('200', $server->cli('GET', 'counter'));
    }

    public function testAPoolOpensASecondConnectionOnlyWhileTheFirstIsBusy(): void
    {
        $server = RedisServer::start();
        $client = RedisClient::fromUri($server->uri('?pool=2'));
        self::inLoop(static function () use ($client): void {
            $first = $client->command('CLIENT', 'ID');
            self::assertSame($first, $client->command('CLIENT', 'ID'), 'an idle connection is reused');
            $blocked = async(static fn() => $client->blockingCommand(5.0, ['BLPOP', 'queue', 5]));
            $second = $client->command('CLIENT', 'ID');
            self::assertNotSame($first, $second, 'a command does not wait behind BLPOP when the pool has room');
            self::assertSame(1, $client->command('RPUSH', 'queue', 'job'));
            self::assertSame(['queue', 'job'], $blocked->await());
        });
        self::assertSame(3, substr_count($server->cli('CLIENT', 'LIST'), 'id='), 'the two pooled connections and redis-cli, no more');
        $client->close();
    }

    public function testAPipelineReturnsErrorRepliesInTheirPlace(): void
    {
        $server = RedisServer::start();
        $client = RedisClient::fromUri($server->uri());
        $replies = self::inLoop(static fn(): array => $client->pipeline([['SET', 'a', 'x'], ['INCR', 'a'], ['GET', 'a'], ['DEL', 'a']]));
        self::assertSame('OK', $replies[0]);
        self::assertInstanceOf(ErrorReply::class, $replies[1]);
        self::assertSame(['x', 1], [$replies[2], $replies[3]]);
        $this->expectException(ErrorReplyException::class);
        $this->expectExceptionMessage('WRONGTYPE');
        self::inLoop(static function () use ($client): void {
            $client->command('LPUSH', 'list', 'a');
            $client->command('GET', 'list');
        });
    }

    public function testPasswordAclUserAndDatabaseAreUsedWhenConnecting(): void
    {
        $server = RedisServer::start(['--requirepass', 'main-pw', '--user', 'app', 'on', '>app-pw', '~*', '&*', '+@all'], 'main-pw');
        self::inLoop(static function () use ($server): void {
            $byPassword = RedisClient::fromUri("redis://:main-pw@127.0.0.1:{$server->port}/3");
            $byPassword->set('in-three', 'yes');
            $byUser = RedisClient::fromUri("redis://app:app-pw@127.0.0.1:{$server->port}/3?protocol=3&name=kiln-test");
            self::assertSame('yes', $byUser->get('in-three'));
            self::assertSame('app', $byUser->command('ACL', 'WHOAMI'));
            self::assertSame('kiln-test', $byUser->command('CLIENT', 'GETNAME'));
            self::assertSame(['f' => 'v'], (static function () use ($byUser): array {
                $byUser->command('HSET', 'h', 'f', 'v');

                return $byUser->hashGetAll('h');
            })(), 'RESP3 maps read like RESP2 pairs');
            try {
                RedisClient::fromUri("redis://app:wrong@127.0.0.1:{$server->port}")->get('x');
                self::fail('a wrong password connected');
            } catch (ConnectException $e) {
                self::assertStringContainsString('WRONGPASS', $e->getMessage());
            }
        });
        self::assertSame('yes', $server->cli('-n', '3', 'GET', 'in-three'));
        self::assertSame('', $server->cli('-n', '0', 'GET', 'in-three'));
    }

    public function testACommandWithoutReplyInTimeFailsAndTheConnectionIsReplaced(): void
    {
        $server = RedisServer::start(['--enable-debug-command', 'yes']);
        $client = new RedisClient(RedisConfig::fromUri($server->uri('?timeout=0.3')));
        self::inLoop(static function () use ($client): void {
            $before = $client->command('CLIENT', 'ID');
            $slow = async(static fn() => $client->command('DEBUG', 'SLEEP', 1));
            $behind = async(static fn() => $client->get('x'));
            try {
                $slow->await();
                self::fail('DEBUG SLEEP 1 did not time out');
            } catch (\Throwable $e) {
                self::assertInstanceOf(CommandTimeoutException::class, $e);
                self::assertStringContainsString('did not reply within 0.3 s', $e->getMessage());
            }
            try {
                $behind->await();
                self::fail('the command behind the slow one was not failed');
            } catch (\Throwable $e) {
                self::assertInstanceOf(ConnectionLostException::class, $e);
                self::assertStringContainsString('an earlier command timed out', $e->getMessage());
            }
            self::assertNotSame($before, self::eventually(static fn() => $client->command('CLIENT', 'ID')));
        });
    }

    public function testAServerThatNeverAnswersTheGreetingHitsTheConnectTimeout(): void
    {
        $silent = stream_socket_server('tcp://127.0.0.1:0');
        self::assertIsResource($silent);
        $port = (int) substr((string) stream_socket_get_name($silent, false), 10);
        $client = RedisClient::fromUri("redis://:pw@127.0.0.1:$port?connect_timeout=0.3");
        $this->expectException(ConnectException::class);
        $this->expectExceptionMessage("Greeting Redis at 127.0.0.1:$port failed");
        self::inLoop(static fn() => $client->get('x'));
    }

    public function testAConnectionRefusedIsAConnectExceptionAndTheNextAttemptWaitsForTheBackoff(): void
    {
        $port = RedisServer::freePort();
        $client = RedisClient::fromUri("redis://127.0.0.1:$port");
        self::inLoop(static function () use ($client, $port): void {
            try {
                $client->get('x');
                self::fail('connected to nothing');
            } catch (ConnectException $e) {
                self::assertStringContainsString("Connecting to Redis at 127.0.0.1:$port failed", $e->getMessage());
            }
            try {
                $client->get('x');
                self::fail('connected to nothing');
            } catch (ConnectException $e) {
                self::assertStringContainsString('next attempt in', $e->getMessage());
            }
        });
    }

    public function testAUnixSocketWorksForBothClients(): void
    {
        $socket = sys_get_temp_dir() . '/kiln-redis-' . bin2hex(random_bytes(4)) . '.sock';
        $server = RedisServer::start(['--unixsocket', $socket, '--unixsocketperm', '700']);
        try {
            $client = RedisClient::fromUri("redis://$socket?db=1");
            self::assertSame(1, self::inLoop(static fn(): int => $client->increment('over-unix')));
            self::assertSame(2, SyncRedisClient::fromUri("redis://$socket?db=1")->command('INCR', 'over-unix'));
            self::assertSame('2', $server->cli('-n', '1', 'GET', 'over-unix'));
        } finally {
            $server->stop();
        }
    }

    public function testTlsThroughRediss(): void
    {
        $dir = sys_get_temp_dir() . '/kiln-redis-tls-' . bin2hex(random_bytes(4));
        mkdir($dir);
        exec('openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 -keyout '
            . escapeshellarg("$dir/key.pem") . ' -out ' . escapeshellarg("$dir/cert.pem") . ' 2>/dev/null', $out, $code);
        self::assertSame(0, $code, 'openssl could not make a certificate');
        $tlsPort = RedisServer::freePort();
        $server = RedisServer::start(['--tls-port', (string) $tlsPort, '--tls-cert-file', "$dir/cert.pem", '--tls-key-file', "$dir/key.pem",
            '--tls-ca-cert-file', "$dir/cert.pem", '--tls-auth-clients', 'no']);
        try {
            $client = RedisClient::fromUri("rediss://127.0.0.1:$tlsPort?cafile=" . rawurlencode("$dir/cert.pem"));
            self::assertSame('over tls', self::inLoop(static function () use ($client): ?string {
                $client->set('t', 'over tls');

                return $client->get('t');
            }));
            $big = random_bytes(3 * 1024 * 1024);
            $results = self::inLoop(static function () use ($client, $big): array {
                $client->set('big', $big);
                $futures = [];
                for ($i = 0; $i < 50; $i++) {
                    $futures[] = async(static fn(): ?string => $client->get($i % 10 === 0 ? 'big' : 't'));
                }

                return all($futures);
            });
            foreach ($results as $i => $value) {
                self::assertTrue($value === ($i % 10 === 0 ? $big : 'over tls'), "reply $i over TLS, large values among small ones");
            }
            $sync = SyncRedisClient::fromUri("rediss://127.0.0.1:$tlsPort?cafile=" . rawurlencode("$dir/cert.pem"));
            self::assertSame('over tls', $sync->command('GET', 't'), 'the synchronous client speaks TLS too');
            $id = $sync->command('CLIENT', 'ID');
            self::assertSame($id, $sync->command('CLIENT', 'ID'), 'its idle TLS connection is looked at and kept');
            $sync->close();
            $untrusted = RedisClient::fromUri("rediss://127.0.0.1:$tlsPort?connect_timeout=2");
            try {
                self::inLoop(static fn() => $untrusted->get('t'));
                self::fail('a certificate nobody trusts was accepted');
            } catch (ConnectException $e) {
                self::assertStringContainsString('TLS handshake', $e->getMessage());
            }
        } finally {
            $server->stop();
            array_map('unlink', glob("$dir/*") ?: []);
            rmdir($dir);
        }
    }
}
