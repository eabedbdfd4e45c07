<?php

declare(strict_types=1);

namespace Kiln\Site\Htaccess;

/** The test of a `<Files>` (wildcard, or regex after `~`) or `<FilesMatch>` section on a file's base name. */
final class FilesMatcher
{
    private function __construct(
        private readonly string $pattern,
        private readonly bool $regex,
    ) {}

    /** @throws \InvalidArgumentException when the regex does not compile */
    public static function regex(string $pattern): self
    {
        $compiled = Regex::compile($pattern, false);
        return new self($compiled, true);
    }

    public static function wildcard(string $pattern): self
    {
        return new self($pattern, false);
    }

    public function matches(string $baseName): bool
    {
        if ($this->regex) {
            return preg_match($this->pattern, $baseName) === 1;
        }
        return fnmatch($this->pattern, $baseName, FNM_PATHNAME);
    }
}
