<?php

declare(strict_types=1);

namespace Kiln\Site\Htaccess;

/** What Parser made of one file: the directives that apply (false `<IfModule>` blocks dropped) and what it could not read. */
final class ParsedFile
{
    /**
     * @param list<Directive> $directives in file order
     * @param list<Warning> $warnings
     */
    public function __construct(
        public readonly array $directives,
        public readonly array $warnings,
    ) {}
}
