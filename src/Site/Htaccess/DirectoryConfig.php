<?php

declare(strict_types=1);

namespace Kiln\Site\Htaccess;

/** One .htaccess file, checked: its directory-level settings, its files sections, its rewrite set. */
final class DirectoryConfig
{
    /**
     * @param list<array{list<FilesMatcher>, Settings}> $files files sections in file order
     * @param list<Warning> $warnings
     */
    public function __construct(
        public readonly Settings $settings,
        public readonly array $files,
        /** Null when the file has no rewrite directive (the parent's set applies whole). */
        public readonly ?RewriteSet $rewrite,
        public readonly array $warnings,
        /** Nothing in it: merging it changes nothing (most directories). */
        public readonly bool $blank = false,
    ) {}

    public static function empty(): self
    {
        return new self(new Settings(), [], null, [], true);
    }
}
