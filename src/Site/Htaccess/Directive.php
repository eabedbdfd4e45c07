<?php

declare(strict_types=1);

namespace Kiln\Site\Htaccess;

/** One directive line of an .htaccess file, after continuation lines are joined and quotes removed. */
final class Directive
{
    /**
     * @param list<string> $args
     * @param list<FilesMatcher> $files the `<Files>`/`<FilesMatch>` sections it sits in (all must match)
     * @param ?list<string> $methods upper-case methods of an enclosing `<Limit>`/`<LimitExcept>`, null: none
     * @param list<string> $requireBlocks enclosing `<RequireAll|Any|None>` blocks, outermost first, each `kind#line`
     */
    public function __construct(
        /** As written (`rewriteRule`), for messages. */
        public readonly string $name,
        public readonly array $args,
        public readonly string $file,
        public readonly int $line,
        public readonly array $files = [],
        public readonly ?array $methods = null,
        public readonly bool $exceptMethods = false,
        public readonly array $requireBlocks = [],
    ) {}

    /** The name lower-cased: directive names are case-insensitive. */
    public function key(): string
    {
        return strtolower($this->name);
    }

    public function warning(string $message): Warning
    {
        return new Warning($this->file, $this->line, $this->name, $message);
    }
}
