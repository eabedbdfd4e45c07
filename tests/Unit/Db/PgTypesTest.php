<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Db;

use Kiln\Db\Binary;
use Kiln\Db\Postgres\PgTypes;
use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;

final class PgTypesTest extends TestCase
{
    /** @return iterable<string, array{int, ?string, mixed}> type OID, text from the server, PHP value */
    public static function columns(): iterable
    {
        yield 'bool true' => [16, 't', true];
        yield 'bool false' => [16, 'f', false];
        yield 'int2' => [21, '-32768', -32768];
        yield 'int4' => [23, '2147483647', 2147483647];
        yield 'int8' => [20, '-9223372036854775808', PHP_INT_MIN];
        yield 'oid' => [26, '4294967295', 4294967295];
        yield 'float8' => [701, '0.1', 0.1];
        yield 'float4 exponent' => [700, '1e+30', 1e30];
        yield 'infinity' => [701, '-Infinity', -INF];
        yield 'numeric stays exact' => [1700, '12345678901234567890.000001', '12345678901234567890.000001'];
        yield 'bytea hex' => [17, '\x00ff0a', "\x00\xff\n"];
        yield 'bytea escape' => [17, 'a\000b', "a\0b"];
        yield 'date as text' => [1082, '2026-11-26', '2026-11-26'];
        yield 'timestamptz as text' => [1184, '2026-11-26 21:00:00+00', '2026-11-26 21:00:00+00'];
        yield 'json as text' => [3802, '{"a": 1}', '{"a": 1}'];
        yield 'null of any type' => [23, null, null];
    }

    #[DataProvider('columns')]
    public function testColumnsArriveAsPhpValues(int $oid, ?string $text, mixed $expected): void
    {
        self::assertSame($expected, PgTypes::decode($oid, $text));
    }

    public function testNanArrivesAsNan(): void
    {
        self::assertNan(PgTypes::decode(701, 'NaN'));
    }

    /** @return iterable<string, array{mixed, ?string}> */
    public static function params(): iterable
    {
        yield 'null' => [null, null];
        yield 'true' => [true, 't'];
        yield 'false' => [false, 'f'];
        yield 'int' => [-42, '-42'];
        yield 'float keeps every digit' => [0.1 + 0.2, '0.30000000000000004'];
        yield 'infinite float' => [INF, 'Infinity'];
        yield 'text' => ['héllo', 'héllo'];
        yield 'binary as hex' => [new Binary("\x00\xff"), '\x00ff'];
        yield 'date with offset' => [new \DateTimeImmutable('2026-11-26 10:00:00.5', new \DateTimeZone('+02:00')), '2026-11-26 10:00:00.500000+02:00'];
    }

    #[DataProvider('params')]
    public function testParametersAreSentAsText(mixed $value, ?string $expected): void
    {
        self::assertSame($expected, PgTypes::encode($value));
    }

    public function testAnUnsupportedParameterIsATypeError(): void
    {
        $this->expectException(\TypeError::class);
        PgTypes::encode([1, 2]);
    }
}
