<?php

declare(strict_types=1);

namespace Kiln\Site\Htaccess;

/**
 * The mod_rewrite settings of one directory as Apache merges them: a directory whose .htaccess has no
 * rewrite directive keeps its parent's set whole (rules, base and directory prefix); one that has any
 * replaces the parent's rules, unless `RewriteOptions Inherit` (the parent's rules run after its own)
 * or `InheritBefore` (before them). Engine state is inherited when not set; `RewriteBase` is not (a child's
 * relative substitutions are relative to its own directory, as in Apache since 2.4.4), unless the parent has
 * `RewriteOptions MergeBase` (Apache looks at the parent's options: the same line in the child does not do it).
 */
final class RewriteSet
{
    public ?bool $engine = null;

    public ?string $base = null;

    /** 'inherit', 'inheritbefore' or null. */
    public ?string $inherit = null;

    /** `RewriteOptions MergeBase`: a child without a RewriteBase takes this one's; null when not set here. */
    public ?bool $mergeBase = null;

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
        $merged->inherit = $child->inherit ?? $this->inherit;
        $merged->mergeBase = $child->mergeBase ?? $this->mergeBase;
        $merged->base = $this->mergeBase === true ? $child->base ?? $this->base : $child->base;
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
