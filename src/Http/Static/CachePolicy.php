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
