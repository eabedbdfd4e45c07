<?php

declare(strict_types=1);

namespace Kiln\Db;

enum DbKind: string
{
    case Postgres = 'postgres';
    case MySql = 'mysql';

    public static function fromScheme(string $scheme): ?self
    {
        return match ($scheme) {
            'postgres', 'postgresql', 'pgsql' => self::Postgres,
            'mysql', 'mariadb' => self::MySql,
            default => null,
        };
    }

    public function defaultPort(): int
    {
        return $this === self::Postgres ? 5432 : 3306;
    }
}
