<?php

declare(strict_types=1);

namespace Kiln\Site\Htaccess;

/**
 * The mod_rewrite settings of one directory as Apache merges them: a directory whose .htaccess has no
 * rewrite directive keeps its parent's set whole (rules, base and directory prefix); one that has any
 * replaces the parent's rules, unless `RewriteOptions Inherit` (the parent's rules run after its own)
 * or `InheritBefore` (before them). Engine state and base are inherited when not set.
 */
final class RewriteSet
{
    public ?bool $engine = null;

    public ?string $base = null;

    /** 'inherit', 'inheritbefore' or null. */
    public ?string $inherit = null;

    /** @var list<RewriteRule> */
    public array $rules = [];

    public function __construct(
        /** URL path of the directory whose rules these are, with a trailing slash: the per-directory prefix. */
        public readonly string $directory,
    ) {}

    public function merge(self $child): self
    {
        $merged = new self($child->directory);
        $merged->engine = $child->engine ?? $this->engine;
        $merged->base = $child->base ?? $this->base;
        $merged->inherit = $child->inherit ?? $this->inherit;
        $merged->rules = match ($merged->inherit) {
            'inherit' => [...$child->rules, ...$this->rules],
            'inheritbefore' => [...$this->rules, ...$child->rules],
            default => $child->rules,
        };
        return $merged;
    }

    public function enabled(): bool
    {
        return $this->engine === true && $this->rules !== [];
    }
}
