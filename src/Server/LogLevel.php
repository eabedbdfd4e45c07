<?php

declare(strict_types=1);

namespace Kiln\Server;

enum LogLevel: string
{
    case Debug = 'debug';
    case Info = 'info';
    case Warning = 'warning';
    case Error = 'error';

    public static function parse(string $name): self
    {
        return self::tryFrom(strtolower($name))
            ?? throw new \ValueError("Unknown log level '$name'; use one of: debug, info, warning, error");
    }

    public function severity(): int
    {
        return match ($this) {
            self::Debug => 0,
            self::Info => 1,
            self::Warning => 2,
            self::Error => 3,
        };
    }
}
