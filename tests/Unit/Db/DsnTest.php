<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Db;

use Kiln\Db\DbKind;
use Kiln\Db\Dsn;
use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;

final class DsnTest extends TestCase
{
    public function testATcpUrlGivesEveryPart(): void
    {
        $dsn = Dsn::parse('postgres://app%40x:p%2Fss@db.example:6543/shop%20db?max=20&wait=1.5');
        self::assertSame(DbKind::Postgres, $dsn->kind);
        self::assertSame(['db.example', 6543, null, 'app@x', 'p/ss', 'shop db'], [$dsn->host, $dsn->port, $dsn->socket, $dsn->user, $dsn->password(), $dsn->database]);
        self::assertSame('20', $dsn->option('max', '10'));
        self::assertSame('5', $dsn->option('idle', '5'));
    }

    public function testDefaultPortsFollowTheScheme(): void
    {
        self::assertSame(5432, Dsn::parse('postgresql://u@h/d')->port);
        self::assertSame(3306, Dsn::parse('mysql://u@h/d')->port);
        self::assertSame(DbKind::MySql, Dsn::parse('mariadb://u@h/d')->kind);
    }

    public function testUnixSocketsAreGivenAsAQueryParameterWithAnEmptyHost(): void
    {
        $pg = Dsn::parse('postgres://u@/d?host=/run/postgresql');
        self::assertSame(['/run/postgresql', 'u', 'd'], [$pg->socket, $pg->user, $pg->database]);
        $my = Dsn::parse('mysql://u:pw@/d?socket=%2Frun%2Fmysqld%2Fmysqld.sock');
        self::assertSame(['/run/mysqld/mysqld.sock', 'pw', 'd'], [$my->socket, $my->password(), $my->database]);
        self::assertSame('mysql://u@/run/mysqld/mysqld.sock/d', $my->redacted());
    }

    public function testThePasswordAppearsInNoStringTheDsnMakes(): void
    {
        $dsn = Dsn::parse('postgres://u:hunter2@h:1/d');
        self::assertSame('postgres://u@h:1/d', (string) $dsn);
        self::assertStringNotContainsString('hunter2', print_r($dsn, true));
        self::assertStringNotContainsString('hunter2', var_export(['x' => $dsn->redacted()], true));
    }

    /** @return iterable<string, array{string}> */
    public static function badUrls(): iterable
    {
        yield 'no scheme' => ['user:hunter2@host/db'];
        yield 'unknown scheme' => ['sqlite://user:hunter2@host/db'];
        yield 'broken' => ['postgres://user:hunter2@host:notaport/db'];
    }

    #[DataProvider('badUrls')]
    public function testABadUrlIsAValueErrorThatDoesNotRepeatThePassword(string $url): void
    {
        try {
            Dsn::parse($url);
            self::fail('accepted');
        } catch (\ValueError $e) {
            self::assertStringNotContainsString('hunter2', $e->getMessage());
        }
    }
}
