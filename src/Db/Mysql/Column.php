<?php

declare(strict_types=1);

namespace Kiln\Db\Mysql;

use Kiln\Db\Mysql\Internal\Reader;

/** One column definition of a result set (Protocol::ColumnDefinition41), the parts Kiln uses. */
final class Column
{
    public const FLAG_UNSIGNED = 0x20;
    public const CHARSET_BINARY = 63;

    public function __construct(
        public readonly string $name,
        public readonly int $type,
        public readonly int $flags,
        public readonly int $charset,
        public readonly int $decimals,
    ) {}

    /** @throws MysqlProtocolException */
    public static function parse(string $payload): self
    {
        $in = new Reader($payload);
        for ($i = 0; $i < 4; $i++) {
            $in->lenencString(); // catalog, schema, table, org_table
        }
        $name = (string) $in->lenencString();
        $in->lenencString(); // org_name
        $in->lenenc(); // length of the fixed fields (0x0C)
        $charset = $in->int2();
        $in->int4(); // column length
        $type = $in->int1();
        $flags = $in->int2();
        $decimals = $in->int1();

        return new self($name, $type, $flags, $charset, $decimals);
    }

    public function isUnsigned(): bool
    {
        return ($this->flags & self::FLAG_UNSIGNED) !== 0;
    }
}
