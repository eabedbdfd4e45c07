<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Db\Mysql;

use Kiln\Db\Binary;

/** The steps tests/Fixtures/mysql/record.php plays against MariaDB, and the test replays from its recording. */
final class RecordedConversation
{
    /** @return array<string, array{command: string, sql?: string}> */
    public static function steps(): array
    {
        return [
            'handshake' => ['command' => 'connect'],
            'text types' => ['command' => 'query', 'sql' => "SELECT 1 AS i, -5 AS neg, 18446744073709551615 AS big, 'h\u{e9}llo' AS s,"
                . " NULL AS n, 1.50 AS d, CAST(2.5 AS DOUBLE) AS f, DATE '2026-11-26' AS dt, X'00FF' AS bin"],
            'multiple results' => ['command' => 'query', 'sql' => 'SELECT 1 AS a; SELECT 2 AS b UNION SELECT 3; DO 0'],
            'error' => ['command' => 'query', 'sql' => 'SELECT * FROM no_such_table'],
            'create' => ['command' => 'query', 'sql' => 'CREATE TEMPORARY TABLE t (id INT AUTO_INCREMENT PRIMARY KEY, v VARCHAR(10))'],
            'insert' => ['command' => 'query', 'sql' => "INSERT INTO t (v) VALUES ('a'), ('b')"],
            'prepare' => ['command' => 'prepare', 'sql' => 'SELECT ? AS i, ? AS s, ? AS n, ? AS f, ? AS b, ? AS t,'
                . " CAST('2026-11-26 10:00:00.125' AS DATETIME(3)) AS dt, CAST(? AS SIGNED) AS neg, CAST(? AS UNSIGNED) AS u"],
            'execute' => ['command' => 'execute'],
            'close statement' => ['command' => 'close'],
            'quit' => ['command' => 'quit'],
        ];
    }

    /** @return list<mixed> */
    public static function params(): array
    {
        return [42, 'x', null, 2.5, new Binary("\x00\xff"), true, -7, PHP_INT_MAX];
    }
}
