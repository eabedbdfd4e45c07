<?php

declare(strict_types=1);

namespace Kiln\Db\Postgres;

use Kiln\Db\Result;

/**
 * One pg result as a Result with PHP-typed columns (PgTypes).
 *
 * @internal
 */
final class PgRows
{
    private function __construct() {}

    public static function of(\PgSql\Result $result): Result
    {
        $fields = pg_num_fields($result);
        if ($fields === 0) {
            return new Result([], pg_affected_rows($result));
        }
        $oids = [];
        for ($i = 0; $i < $fields; $i++) {
            $oids[pg_field_name($result, $i)] = (int) pg_field_type_oid($result, $i);
        }
        $rows = [];
        foreach (pg_fetch_all($result, PGSQL_ASSOC) as $row) {
            $typed = [];
            foreach ($row as $name => $text) {
                \assert(\is_string($text) || $text === null);
                $typed[(string) $name] = PgTypes::decode($oids[$name] ?? 25, $text);
            }
            $rows[] = $typed;
        }

        return new Result($rows, pg_affected_rows($result));
    }
}
