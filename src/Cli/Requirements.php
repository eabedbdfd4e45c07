<?php

declare(strict_types=1);

namespace Kiln\Cli;

/**
 * The PHP extensions `kiln serve` cannot run without, checked before anything starts, so a PHP built or
 * configured without one fails with their names instead of an undefined function deep in a worker.
 * pcntl and posix run the process tree; ctype and tokenizer parse CGI responses, .htaccess and scripts.
 * Optional ones (ffi, shmop, zlib, opcache) are checked where they are used.
 */
final class Requirements
{
    public const EXTENSIONS = ['pcntl', 'posix', 'ctype', 'tokenizer'];

    /** @param \Closure(string): bool $loaded */
    public function __construct(private readonly \Closure $loaded) {}

    public static function ofThisPhp(): self
    {
        return new self(\extension_loaded(...));
    }

    /** @return list<string> the required extensions this PHP lacks */
    public function missing(): array
    {
        return array_values(array_filter(self::EXTENSIONS, fn(string $name): bool => !($this->loaded)($name)));
    }

    /** null when nothing is missing; otherwise one line for the operator */
    public function problem(): ?string
    {
        $missing = $this->missing();
        if ($missing === []) {
            return null;
        }
        return 'this PHP (' . PHP_BINARY . ' ' . PHP_VERSION . ') lacks the extension' . (\count($missing) > 1 ? 's ' : ' ')
            . implode(', ', $missing) . ', which Kiln needs (' . implode(', ', self::EXTENSIONS) . '): they ship with PHP '
            . '(Debian: php' . PHP_MAJOR_VERSION . '.' . PHP_MINOR_VERSION . '-cli and -common); check that php.ini loads them';
    }
}
