<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Db\Mysql;

use Kiln\Db\Mysql\Event\Done;
use Kiln\Db\Mysql\Event\Prepared;
use Kiln\Db\Mysql\Event\Ready;
use Kiln\Db\Mysql\Event\Row;
use Kiln\Db\Mysql\Event\ServerError;
use Kiln\Db\Mysql\MysqlCodec;
use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;

/**
 * MysqlCodec replays a conversation recorded from MariaDB 10.11 (tests/Fixtures/mysql/record.php): it must
 * send exactly what the server accepted then, and read the server's bytes into the same events whether
 * they arrive whole or one byte at a time.
 */
final class RecordedConversationTest extends TestCase
{
    /** @return iterable<string, array{bool}> */
    public static function feeds(): iterable
    {
        yield 'whole' => [false];
        yield 'byte by byte' => [true];
    }

    #[DataProvider('feeds')]
    public function testTheRecordedConversationReplaysToTheSameEvents(bool $byteByByte): void
    {
        $events = $this->replay($byteByByte);

        $ready = $events['handshake'][0] ?? null;
        self::assertInstanceOf(Ready::class, $ready);
        self::assertStringContainsString('MariaDB', $ready->serverVersion);

        self::assertSame([[
            'i' => 1, 'neg' => -5, 'big' => '18446744073709551615', 's' => "h\u{e9}llo", 'n' => null, 'd' => '1.50',
            'f' => 2.5, 'dt' => '2026-11-26', 'bin' => "\x00\xff",
        ]], self::rows($events['text types']));
        self::assertSame([['a' => 1], ['b' => 2], ['b' => 3]], self::rows($events['multiple results']));
        self::assertSame([true, true, false], array_map(static fn(Done $d): bool => $d->moreResults, self::dones($events['multiple results'])));

        $error = $events['error'][0] ?? null;
        self::assertInstanceOf(ServerError::class, $error);
        self::assertSame([1146, '42S02', "Table 'kiln.no_such_table' doesn't exist"], [$error->code, $error->sqlState, $error->message]);

        $insert = self::dones($events['insert'])[0];
        self::assertSame([2, 1], [$insert->affectedRows, $insert->lastInsertId]);

        $prepared = $events['prepare'][0] ?? null;
        self::assertInstanceOf(Prepared::class, $prepared);
        self::assertSame(8, $prepared->paramCount);
        self::assertSame(['i', 's', 'n', 'f', 'b', 't', 'dt', 'neg', 'u'], array_map(static fn($c) => $c->name, $prepared->columns));

        $row = self::rows($events['execute'])[0] ?? [];
        self::assertSame(42, $row['i'] ?? null);
        self::assertSame('x', $row['s'] ?? null);
        self::assertArrayHasKey('n', $row);
        self::assertNull($row['n']);
        self::assertSame(2.5, $row['f'] ?? null);
        self::assertSame("\x00\xff", $row['b'] ?? null);
        self::assertSame(1, $row['t'] ?? null, 'a bool is sent as TINYINT');
        self::assertSame('2026-11-26 10:00:00.125', $row['dt'] ?? null);
        self::assertSame(-7, $row['neg'] ?? null);
        self::assertSame(PHP_INT_MAX, $row['u'] ?? null);
        self::assertSame([], $events['close statement']);
        self::assertSame([], $events['quit']);
    }

    /** @return array<string, list<object>> events per step */
    private function replay(bool $byteByByte): array
    {
        $recorded = json_decode((string) file_get_contents(\dirname(__DIR__, 3) . '/Fixtures/mysql/conversation.json'), true, flags: JSON_THROW_ON_ERROR);
        \assert(\is_array($recorded));
        $codec = new MysqlCodec('kiln', 'm4ria-pw', 'kiln');
        $statement = 0;
        $all = [];
        foreach (RecordedConversation::steps() as $name => $step) {
            $bytes = $recorded[$name] ?? null;
            if (!\is_array($bytes) || !\is_string($bytes['client'] ?? null) || !\is_string($bytes['server'] ?? null)) {
                throw new \LogicException("no recording of step $name: run tests/Fixtures/mysql/record.php");
            }
            match ($step['command']) {
                'connect' => null,
                'query' => $codec->query($step['sql'] ?? ''),
                'prepare' => $codec->prepare($step['sql'] ?? ''),
                'execute' => $codec->execute($statement, RecordedConversation::params()),
                'close' => $codec->closeStatement($statement),
                'quit' => $codec->quit(),
                default => throw new \LogicException("unknown command {$step['command']}"),
            };
            $sent = $codec->output();
            $events = [];
            $server = (string) hex2bin($bytes['server']);
            foreach ($byteByByte ? str_split($server) : [$server] as $chunk) {
                if ($chunk === '') {
                    continue;
                }
                $codec->feed($chunk);
                while (($event = $codec->next()) !== null) {
                    $events[] = $event;
                    if ($event instanceof Prepared) {
                        $statement = $event->id;
                    }
                }
                $sent .= $codec->output();
            }
            self::assertSame($bytes['client'], bin2hex($sent), "what the client sent in step $name");
            $all[$name] = $events;
        }

        return $all;
    }

    /**
     * @param list<object> $events
     *
     * @return list<array<string, mixed>>
     */
    private static function rows(array $events): array
    {
        return array_values(array_map(static fn(Row $r): array => $r->values, array_filter($events, static fn($e) => $e instanceof Row)));
    }

    /**
     * @param list<object> $events
     *
     * @return list<Done>
     */
    private static function dones(array $events): array
    {
        return array_values(array_filter($events, static fn($e) => $e instanceof Done));
    }
}
