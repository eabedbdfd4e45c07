<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Architecture;

/**
 * The layer rules of docs/internals.md, checked on source code: each directory under src/ is a layer
 * (`Kiln\Http` lives in src/Http), and a file may name another layer only if that layer is below its own.
 * A class under an `Internal` namespace belongs to its layer: no other layer may name it. PHPStan sees
 * neither rule.
 *
 * What counts as naming: every qualified or fully qualified name starting with `Kiln\` (use statements,
 * group uses, `use function`, `\Kiln\...` in code). Names in strings and docblocks do not count.
 */
final class LayerRules
{
    /**
     * Layer => the layers it may use. Http and Isolation are siblings: neither uses the other. Redis (the
     * client) sits below Store, which puts its backends on it, and uses the Loop alone; Server does not use it.
     * Db (the database clients) sits on Loop alone: App, Site and Http may use it; Store, Server and Isolation
     * do not.
     */
    public const ALLOWED = [
        'Cli' => ['App', 'Site', 'Http', 'Isolation', 'Store', 'Redis', 'Db', 'Server', 'Loop'],
        'App' => ['Site', 'Http', 'Isolation', 'Store', 'Redis', 'Db', 'Server', 'Loop'],
        'Site' => ['Http', 'Isolation', 'Store', 'Redis', 'Db', 'Server', 'Loop'],
        'Http' => ['Store', 'Redis', 'Db', 'Server', 'Loop'],
        'Db' => ['Loop'],
        'Isolation' => ['Server', 'Loop'],
        'Store' => ['Redis', 'Server', 'Loop'],
        'Redis' => ['Loop'],
        'Server' => ['Loop'],
        'Loop' => [],
    ];

    /** Classes at the root of src/ (constants every layer may read). */
    public const ROOT_CLASSES = ['Kiln\Kiln'];

    /**
     * Every breach of the rules under $root (a src/ directory), one line each: file, what it names, why.
     *
     * @return list<string>
     */
    public static function violations(string $root): array
    {
        $root = rtrim($root, '/');
        $found = [];
        $files = new \RecursiveIteratorIterator(new \RecursiveDirectoryIterator($root, \FilesystemIterator::SKIP_DOTS));
        foreach ($files as $file) {
            \assert($file instanceof \SplFileInfo);
            if ($file->getExtension() !== 'php') {
                continue;
            }
            $relative = substr($file->getPathname(), \strlen($root) + 1);
            $layer = str_contains($relative, '/') ? explode('/', $relative, 2)[0] : null;
            if ($layer !== null && !isset(self::ALLOWED[$layer])) {
                $found[] = "$relative: src/$layer is no known layer (add it to the layer order)";
                continue;
            }
            foreach (self::names((string) file_get_contents($file->getPathname())) as $name) {
                $problem = self::check($layer, $name);
                if ($problem !== null) {
                    $found[] = "$relative: $name ($problem)";
                }
            }
        }
        sort($found);
        return array_values(array_unique($found));
    }

    /** Why naming $name from a file of $layer (null: the root of src/) breaks the rules, or null if it does not. */
    private static function check(?string $layer, string $name): ?string
    {
        if (\in_array($name, self::ROOT_CLASSES, true)) {
            return null;
        }
        $target = explode('\\', $name)[1] ?? '';
        if ($layer === null) {
            return 'the root of src/ uses no layer';
        }
        if ($target !== $layer && !\in_array($target, self::ALLOWED[$layer], true)) {
            return isset(self::ALLOWED[$target]) ? "$layer may not use $target: it is not below $layer" : "no layer $target";
        }
        if ($target !== $layer && (str_contains($name, '\\Internal\\') || str_ends_with($name, '\\Internal'))) {
            return "$target's Internal is for $target alone";
        }
        return null;
    }

    /** @return list<string> the `Kiln\...` names in $code, without a leading backslash */
    private static function names(string $code): array
    {
        $names = [];
        foreach (token_get_all($code) as $token) {
            if (\is_array($token) && ($token[0] === T_NAME_QUALIFIED || $token[0] === T_NAME_FULLY_QUALIFIED)) {
                $name = ltrim($token[1], '\\');
                if (str_starts_with($name, 'Kiln\\')) {
                    $names[] = $name;
                }
            }
        }
        return $names;
    }
}
