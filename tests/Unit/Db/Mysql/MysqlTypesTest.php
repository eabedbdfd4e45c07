<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Db\Mysql;

use Kiln\Db\Binary;
use Kiln\Db\Mysql\Column;
use Kiln\Db\Mysql\Internal\Reader;
use Kiln\Db\Mysql\MysqlTypes;
use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;

final class MysqlTypesTest extends TestCase
{
    /** @return iterable<string, array{int, int, ?string, mixed}> type, flags, text from the server, PHP value */
    public static function textColumns(): iterable
    {
        yield 'TINYINT' => [MysqlTypes::TINY, 0, '-128', -128];
        yield 'SMALLINT' => [MysqlTypes::SHORT, 0, '32767', 32767];
        yield 'INT' => [MysqlTypes::LONG, 0, '-2147483648', -2147483648];
        yield 'MEDIUMINT' => [MysqlTypes::INT24, 0, '8388607', 8388607];
        yield 'BIGINT' => [MysqlTypes::LONGLONG, 0, '-9223372036854775808', PHP_INT_MIN];
        yield 'BIGINT UNSIGNED that fits' => [MysqlTypes::LONGLONG, Column::FLAG_UNSIGNED, '9223372036854775807', PHP_INT_MAX];
        yield 'BIGINT UNSIGNED above PHP_INT_MAX' => [MysqlTypes::LONGLONG, Column::FLAG_UNSIGNED, '18446744073709551615', '18446744073709551615'];
        yield 'YEAR' => [MysqlTypes::YEAR, 0, '2026', 2026];
        yield 'FLOAT' => [MysqlTypes::FLOAT, 0, '1.5', 1.5];
        yield 'DOUBLE' => [MysqlTypes::DOUBLE, 0, '-0.25', -0.25];
        yield 'DECIMAL stays exact' => [0xF6, 0, '12345678901234567890.10', '12345678901234567890.10'];
        yield 'DATE' => [MysqlTypes::DATE, 0, '2026-11-26', '2026-11-26'];
        yield 'DATETIME' => [MysqlTypes::DATETIME, 0, '2026-11-26 10:00:00.5', '2026-11-26 10:00:00.5'];
        yield 'VARCHAR' => [MysqlTypes::VAR_STRING, 0, "h\u{e9}llo", "h\u{e9}llo"];
        yield 'BLOB' => [MysqlTypes::BLOB, 0, "\x00\xff", "\x00\xff"];
        yield 'NULL' => [MysqlTypes::LONG, 0, null, null];
    }

    #[DataProvider('textColumns')]
    public function testTextValuesArriveAsPhpValues(int $type, int $flags, ?string $text, mixed $expected): void
    {
        self::assertSame($expected, MysqlTypes::fromText(new Column('c', $type, $flags, 63, 0), $text));
    }

    /** @return iterable<string, array{int, int, int, string, mixed}> type, flags, decimals, binary bytes, PHP value */
    public static function binaryColumns(): iterable
    {
        yield 'TINYINT' => [MysqlTypes::TINY, 0, 0, "\xFF", -1];
        yield 'TINYINT UNSIGNED' => [MysqlTypes::TINY, Column::FLAG_UNSIGNED, 0, "\xFF", 255];
        yield 'SMALLINT' => [MysqlTypes::SHORT, 0, 0, "\xFE\xFF", -2];
        yield 'INT' => [MysqlTypes::LONG, 0, 0, "\x00\x00\x00\x80", -2147483648];
        yield 'INT UNSIGNED' => [MysqlTypes::LONG, Column::FLAG_UNSIGNED, 0, "\xFF\xFF\xFF\xFF", 4294967295];
        yield 'BIGINT UNSIGNED max' => [MysqlTypes::LONGLONG, Column::FLAG_UNSIGNED, 0, str_repeat("\xFF", 8), '18446744073709551615'];
        yield 'FLOAT' => [MysqlTypes::FLOAT, 0, 31, pack('g', 0.1), 0.1];
        yield 'FLOAT of more than 6 digits, as in a text result' => [MysqlTypes::FLOAT, 0, 31, pack('g', 123456789.0), 123457000.0];
        yield 'FLOAT of 7 digits' => [MysqlTypes::FLOAT, 0, 31, pack('g', 1234567.0), 1234570.0];
        yield 'FLOAT(7,3)' => [MysqlTypes::FLOAT, 0, 3, pack('g', 1234.568), 1234.568];
        yield 'FLOAT MariaDB 11 not fixed' => [MysqlTypes::FLOAT, 0, 39, pack('g', 3.3), 3.3];
        yield 'DOUBLE' => [MysqlTypes::DOUBLE, 0, 31, pack('e', 0.1), 0.1];
        yield 'DATE' => [MysqlTypes::DATE, 0, 0, "\x04" . pack('v', 2026) . "\x0B\x1A", '2026-11-26'];
        yield 'DATETIME zero' => [MysqlTypes::DATETIME, 0, 0, "\x00", '0000-00-00 00:00:00'];
        yield 'DATETIME(3)' => [MysqlTypes::DATETIME, 0, 3, "\x0B" . pack('v', 2026) . "\x0B\x1A\x0A\x00\x05" . pack('V', 125000), '2026-11-26 10:00:05.125'];
        yield 'negative TIME' => [MysqlTypes::TIME, 0, 0, "\x08\x01" . pack('V', 1) . "\x02\x03\x04", '-26:03:04'];
        yield 'VARCHAR' => [MysqlTypes::VAR_STRING, 0, 0, "\x02ab", 'ab'];
    }

    #[DataProvider('binaryColumns')]
    public function testBinaryValuesArriveAsPhpValues(int $type, int $flags, int $decimals, string $bytes, mixed $expected): void
    {
        $in = new Reader($bytes);
        self::assertSame($expected, MysqlTypes::fromBinary(new Column('c', $type, $flags, 63, $decimals), $in));
        self::assertTrue($in->atEnd(), 'exactly the value was read');
    }

    /** @return iterable<string, array{mixed, string, string}> parameter, type header, bytes */
    public static function params(): iterable
    {
        yield 'null' => [null, "\x06\x00", ''];
        yield 'bool' => [true, "\x01\x00", "\x01"];
        yield 'int' => [-1, "\x08\x00", str_repeat("\xFF", 8)];
        yield 'float' => [0.5, "\x05\x00", pack('e', 0.5)];
        yield 'string' => ['héllo', "\xFD\x00", "\x06héllo"];
        yield 'binary' => [new Binary("\x00"), "\xFC\x00", "\x01\x00"];
        yield 'date' => [new \DateTimeImmutable('2026-11-26 10:00:00.5'), "\xFD\x00", "\x1A2026-11-26 10:00:00.500000"];
    }

    #[DataProvider('params')]
    public function testParametersAreSentTyped(mixed $value, string $type, string $bytes): void
    {
        self::assertSame([$type, $bytes], MysqlTypes::param($value));
    }
}
