<?php

declare(strict_types=1);

namespace Kiln\Http\Static;

use Kiln\Http\Wire\Internal\FieldSyntax;

/**
 * Which Cache-Control a static file gets, by URL path prefix or file extension; the first rule that
 * matches wins. The default, none(), sends no Cache-Control at all: browsers then revalidate with
 * ETag / Last-Modified, which is always correct. Long lifetimes are for paths whose names change
 * with their content (fingerprinted assets), and only the operator knows which those are:
 *
 *     CachePolicy::none()
 *         ->withPrefix('/build/', 'public, max-age=31536000, immutable')
 *         ->withExtensions(['woff2', 'png'], 'public, max-age=86400')
 *         ->withPrefix('/', 'no-cache');
 *
 * Immutable: each with*() returns a new policy.
 */
final class CachePolicy
{
    /** @var list<array{?string, ?array<string, true>, string}> prefix, extensions, value */
    private array $rules = [];

    /** No rules: no Cache-Control on any file. */
    public static function none(): self
    {
        return new self();
    }

    /** Paths starting with $prefix (decoded, e.g. '/assets/'; case-sensitive) get $cacheControl. */
    public function withPrefix(string $prefix, string $cacheControl): self
    {
        if (!str_starts_with($prefix, '/')) {
            throw new \ValueError("A cache rule's path prefix starts with '/', got '$prefix'");
        }
        self::check($cacheControl);
        return $this->with([$prefix, null, $cacheControl]);
    }

    /** @param list<string> $extensions without the dot, any case ('css', 'js') */
    public function withExtensions(array $extensions, string $cacheControl): self
    {
        $set = [];
        foreach ($extensions as $extension) {
            if ($extension === '' || str_contains($extension, '.') || str_contains($extension, '/')) {
                throw new \ValueError("A cache rule's extension is a name without dot or slash, like 'css', got '$extension'");
            }
            $set[strtolower($extension)] = true;
        }
        if ($set === []) {
            throw new \ValueError('A cache rule needs at least one extension');
        }
        self::check($cacheControl);
        return $this->with([null, $set, $cacheControl]);
    }

    /**
     * One rule written as `kiln serve --cache-control` takes it: `PATTERN[,PATTERN…]=CACHE-CONTROL`, each
     * pattern a path prefix starting with `/` or an extension as `*.EXT` (`/build/=public, max-age=31536000,
     * immutable`, `*.woff2,*.png=public, max-age=86400`); the value starts after the first `=`. Its patterns
     * are added in the order written, after the rules already there.
     *
     * @throws \ValueError naming what is wrong
     */
    public function withRule(string $rule): self
    {
        $equals = strpos($rule, '=');
        if ($equals === false) {
            throw new \ValueError("A cache rule is PATTERN[,PATTERN...]=CACHE-CONTROL, like '/build/=public, max-age=31536000' or '*.png,*.css=public, max-age=86400', got '$rule'");
        }
        $value = trim(substr($rule, $equals + 1), " \t");
        $policy = $this;
        $extensions = [];
        foreach (explode(',', substr($rule, 0, $equals)) as $pattern) {
            $pattern = trim($pattern, " \t");
            if (str_starts_with($pattern, '*.')) {
                $extensions[] = substr($pattern, 2);
                continue;
            }
            if ($extensions !== []) {
                $policy = $policy->withExtensions($extensions, $value);
                $extensions = [];
            }
            if (!str_starts_with($pattern, '/')) {
                throw new \ValueError("A cache rule's pattern is a path prefix starting with '/' or an extension as '*.EXT', got '$pattern' in '$rule'");
            }
            $policy = $policy->withPrefix($pattern, $value);
        }
        return $extensions === [] ? $policy : $policy->withExtensions($extensions, $value);
    }

    /**
     * The Cache-Control value for a file served at $path (decoded URL path), or null for none. Extension
     * rules look at $file, the file actually served, when given (/docs/ serving /docs/index.html is html).
     */
    public function for(string $path, ?string $file = null): ?string
    {
        if ($this->rules === []) {
            return null;
        }
        $base = basename($file ?? $path);
        $dot = strrpos($base, '.');
        $extension = $dot === false ? '' : strtolower(substr($base, $dot + 1));
        foreach ($this->rules as [$prefix, $extensions, $value]) {
            if ($prefix !== null ? str_starts_with($path, $prefix) : isset($extensions[$extension])) {
                return $value;
            }
        }
        return null;
    }

    /** @param array{?string, ?array<string, true>, string} $rule */
    private function with(array $rule): self
    {
        $copy = clone $this;
        $copy->rules[] = $rule;
        return $copy;
    }

    private static function check(string $cacheControl): void
    {
        if (trim($cacheControl) === '') {
            throw new \ValueError("A cache rule's Cache-Control value is empty");
        }
        FieldSyntax::assertResponseField('Cache-Control', $cacheControl);
    }
}
