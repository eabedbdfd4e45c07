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

    /**
     * The level of a message PHP logged, by its prefix: PHP's errors are errors, its warnings warnings, its notices
     * and deprecations info (the log has no notice level); anything else (a script's own error_log() text, what it
     * writes to STDERR) is a warning, as php-fpm files what its children say.
     */
    public static function ofPhpMessage(string $message): self
    {
        if (!str_starts_with($message, 'PHP ')) {
            return self::Warning;
        }
        return match (true) {
            preg_match('/^PHP (?:Fatal|Parse|Recoverable fatal|Core|Compile) error/', $message) === 1 => self::Error,
            preg_match('/^PHP (?:Notice|Deprecated|Strict Standards)/', $message) === 1 => self::Info,
            default => self::Warning,
        };
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
