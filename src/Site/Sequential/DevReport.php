<?php

declare(strict_types=1);

namespace Kiln\Site\Sequential;

use Kiln\Http\Request;
use Kiln\Http\Response;
use Kiln\Server\WorkerLog;
use Kiln\Site\Script;
use Kiln\Site\ScriptRunner;

/**
 * `kiln serve --dev` on the sequential tier: after each request, a warning for what the script left in the worker
 * that the tier does not reset and that the next request would meet (docs/development.md). One warning per script
 * and kind. It wraps the runner, so without --dev nothing of it is on the request path.
 *
 * Kinds, and when each counts as left behind:
 * - function, class: declared by a file the next request runs again: the requested script itself, or a file the
 *   tier removed from get_included_files() after the request. Files that declare and were loaded with require_once or
 *   by an autoloader stay loaded, as intended: not reported.
 * - constant: one the script's own source declares by name (`const NAME`, `define('NAME', …)`; PHP keeps no file
 *   for a constant).
 * - static: a static variable of a function or method, or a static property, that existed before the request
 *   and holds another value after it.
 * - putenv: the process environment differs after the request.
 * - autoloader: one registered by a file the next request runs again, or registered once more.
 * - memory: on a later run of the same script that declared nothing, more than MEMORY bytes still in use after it.
 *
 * A request that ends the worker (exit(), a shutdown function, a fatal error) leaves nothing behind: not reported.
 */
final class DevReport implements ScriptRunner
{
    /** Bytes a request may leave in use (after garbage collection) before it is reported. */
    public const MEMORY = 256 * 1024;

    /** Kiln's own directory (its src/ and vendor/ are not the script's). */
    private readonly string $own;

    /** @var array<string, true> "script\0kind" already reported */
    private array $reported = [];

    /** @var array<string, true> scripts run once already in this worker */
    private array $ran = [];

    /** @var \Closure(string, string): void */
    private readonly \Closure $log;

    /** @param (\Closure(string, string): void)|null $log level, message; default the worker's error log */
    public function __construct(
        private readonly SequentialRunner $runner,
        ?\Closure $log = null,
    ) {
        $this->own = \dirname(__DIR__, 3) . '/';
        $this->log = $log ?? WorkerLog::write(...);
    }

    public function run(Request $request, Script $script): Response
    {
        $this->runner->boot(); // before gc_disable(), an ini change the worker's starting settings must not include
        $before = DevSnapshot::take($this->own);
        // The cycle collector waits while the script runs and collects in take() between requests: a collection in
        // the middle of a script, with the snapshot's copies of the statics held, broke phpMyAdmin's Twig (a live
        // node freed, then SIGSEGV: an engine fault, which no PHP code can cause). docs/development.md.
        $collecting = gc_enabled();
        gc_disable();
        try {
            $response = $this->runner->run($request, $script);
        } finally {
            if ($collecting) {
                gc_enable();
            }
        }
        $after = DevSnapshot::take($this->own);
        foreach ($this->leftBehind($before, $after, $script->filename) as $kind => $what) {
            $key = "$script->filename\0$kind";
            if (!isset($this->reported[$key])) {
                $this->reported[$key] = true;
                ($this->log)('warning', "--dev: $script->scriptName [$kind] leaves $what");
            }
        }
        $this->ran[$script->filename] = true;
        return $response;
    }

    /**
     * What the request left behind, one line per kind.
     *
     * @return array<string, string> kind => what
     */
    public function leftBehind(DevSnapshot $before, DevSnapshot $after, string $script): array
    {
        $listed = array_flip(get_included_files());
        $runsAgain = static fn(?string $file): bool => $file !== null && ($file === $script || !isset($listed[$file]));
        $found = [];
        $functions = [];
        foreach (array_keys(array_diff_key($after->functions, $before->functions)) as $name) {
            $function = new \ReflectionFunction($name);
            $file = $function->getFileName();
            if ($runsAgain($file === false ? null : $file)) {
                $functions[] = $function->getName() . '() (' . DevSnapshot::where($file, $function->getStartLine()) . ')';
            }
        }
        if ($functions !== []) {
            $found['function'] = 'function ' . self::list($functions) . ' declared: the next request that runs it fails with "Cannot redeclare"';
        }
        $classes = [];
        foreach (array_keys(array_diff_key($after->classes, $before->classes)) as $name) {
            /** @var class-string $name (declared: get_declared_classes() listed it) */
            $class = new \ReflectionClass($name);
            $file = $class->getFileName();
            if (!$class->isAnonymous() && $runsAgain($file === false ? null : $file)) {
                $classes[] = $class->getName() . ' (' . DevSnapshot::where($file, $class->getStartLine()) . ')';
            }
        }
        if ($classes !== []) {
            $found['class'] = 'class ' . self::list($classes) . ' declared: the next request that runs it fails with "Cannot declare class"';
        }
        $declared = self::constantsIn($script);
        $constants = [];
        foreach (array_keys(array_diff_key($after->constants, $before->constants)) as $name) {
            $short = substr((string) strrchr('\\' . $name, '\\'), 1);
            if (isset($declared[$short])) {
                $constants[] = "$name (" . basename($script) . ":{$declared[$short]})";
            }
        }
        if ($constants !== []) {
            $found['constant'] = 'constant ' . self::list($constants) . ' defined: the next request keeps its value, and defining it again is a warning';
        }
        $statics = [];
        foreach ($before->statics as $name => [$value, $where]) {
            if (\array_key_exists($name, $after->statics) && $after->statics[$name][0] !== $value) {
                $statics[] = "$name ($where)";
            }
        }
        if ($statics !== []) {
            $found['static'] = 'static ' . self::list($statics) . ' changed: the next request starts with the new value';
        }
        $env = [];
        foreach ($after->env + $before->env as $name => $value) {
            if (($before->env[$name] ?? null) !== ($after->env[$name] ?? null)) {
                $env[] = $name;
            }
        }
        if ($env !== []) {
            $found['putenv'] = 'the environment changed (putenv() of ' . self::list($env) . '): the next request sees it';
        }
        $loaders = [];
        foreach (spl_autoload_functions() as $loader) {
            [$key, $file, $line] = DevSnapshot::identify($loader);
            $added = ($after->autoloaders[$key] ?? 0) > ($before->autoloaders[$key] ?? 0);
            if ($added && (isset($before->autoloaders[$key]) || $runsAgain($file)) && !\in_array($key, $loaders, true)) {
                $loaders[] = $key . ($file === null || str_starts_with($key, 'a closure') ? '' : ' (' . DevSnapshot::where($file, $line) . ')');
            }
        }
        if ($loaders !== []) {
            $found['autoloader'] = 'autoloader ' . self::list($loaders) . ' registered: the next request registers it once more';
        }
        $grew = $after->memory - $before->memory;
        if (isset($this->ran[$script]) && $grew > self::MEMORY
            && array_diff_key($after->functions, $before->functions) === [] && array_diff_key($after->classes, $before->classes) === []) {
            $found['memory'] = round($grew / 1024) . ' KiB more memory in use after it than before: each request adds to the worker\'s memory';
        }
        return $found;
    }

    /**
     * The constants a file declares by name: `const NAME = …` and `define('NAME', …)`, with their lines.
     *
     * @return array<string, int> name (without namespace) => line
     */
    private static function constantsIn(string $file): array
    {
        $source = @file_get_contents($file);
        if ($source === false) {
            return [];
        }
        $tokens = array_values(array_filter(
            token_get_all($source),
            static fn(array|string $token): bool => !\is_array($token) || !\in_array($token[0], [T_WHITESPACE, T_COMMENT, T_DOC_COMMENT], true),
        ));
        $found = [];
        foreach ($tokens as $i => $token) {
            if (!\is_array($token)) {
                continue;
            }
            $next = $tokens[$i + 1] ?? null;
            if ($token[0] === T_CONST && \is_array($next) && $next[0] === T_STRING) {
                $found[$next[1]] = $token[2];
            } elseif (\in_array(strtolower(ltrim($token[1], '\\')), ['define'], true) && ($next === '(')) {
                $name = $tokens[$i + 2] ?? null;
                if (\is_array($name) && $name[0] === T_CONSTANT_ENCAPSED_STRING) {
                    $found[substr((string) strrchr('\\' . substr($name[1], 1, -1), '\\'), 1)] = $token[2];
                }
            }
        }
        return $found;
    }

    /** @param list<string> $items */
    private static function list(array $items): string
    {
        return implode(', ', \array_slice($items, 0, 5)) . (\count($items) > 5 ? ' and ' . (\count($items) - 5) . ' more' : '');
    }
}
