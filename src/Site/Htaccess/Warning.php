<?php

declare(strict_types=1);

namespace Kiln\Site\Htaccess;

/** A directive Kiln did not apply, or applied differently: the caller logs it once per parse of the file. */
final class Warning
{
    public function __construct(
        public readonly string $file,
        public readonly int $line,
        /** The directive (or section) as written, e.g. `RewriteMap` or `<If>`. */
        public readonly string $directive,
        public readonly string $message,
    ) {}

    public function __toString(): string
    {
        return "{$this->file}:{$this->line}: {$this->directive}: {$this->message}";
    }
}
