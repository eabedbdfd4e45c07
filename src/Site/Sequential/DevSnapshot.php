<?php

declare(strict_types=1);

namespace Kiln\Site\Sequential;

/**
 * What a worker holds between two requests that the sequential tier does not reset: user functions, classes,
 * constants, the values of static variables and static properties, the process environment, the autoloaders,
 * the memory in use. Taken before and after a script by DevReport (`--dev`); never on the request path otherwise.
 *
 * Static variables are read through Reflection: those of user functions and of the methods of user classes
 * (ReflectionFunctionAbstract::getStaticVariables(), the values PHP holds now), and the static properties
 * declared by user classes. Kiln's own code (its `src/` and `vendor/`) is left out: it keeps its caches there.
 * Values are compared with `===`: an object counts as unchanged while it is the same object, whatever
 * happened inside it.
 *
 * @internal
 */
final class DevSnapshot
{
    /**
     * @param array<string, true> $functions lower-case names
     * @param array<string, true> $classes lower-case names of classes, interfaces, traits and enums
     * @param array<string, mixed> $constants
     * @param array<string, array{mixed, string}> $statics "f()" / "C::m()" / "C::$p" => [value, file:line]
     * @param array<string, string> $env
     * @param array<string, int> $autoloaders identity => how many times it is registered
     */
    private function __construct(
        public readonly array $functions,
        public readonly array $classes,
        public readonly array $constants,
        public readonly array $statics,
        public readonly array $env,
        public readonly array $autoloaders,
        public readonly int $memory,
    ) {}

    /** @param string $own files under this prefix are Kiln's own (their statics are not looked at) */
    public static function take(string $own): self
    {
        gc_collect_cycles(); // garbage waiting for the collector is not memory kept
        $functions = array_fill_keys(get_defined_functions()['user'], true);
        $classes = array_fill_keys(array_map('strtolower', [...get_declared_classes(), ...get_declared_interfaces(), ...get_declared_traits()]), true);
        $statics = [];
        foreach (array_keys($functions) as $name) {
            $function = new \ReflectionFunction($name);
            if (!self::isOwn($function->getFileName(), $own)) {
                foreach ($function->getStaticVariables() as $variable => $value) {
                    $statics["$name()::\$$variable"] = [$value, self::where($function->getFileName(), $function->getStartLine())];
                }
            }
        }
        foreach (array_keys($classes) as $name) {
            /** @var class-string $name (declared: get_declared_classes() listed it) */
            $class = new \ReflectionClass($name);
            if ($class->isInternal() || self::isOwn($class->getFileName(), $own)) {
                continue;
            }
            self::classStatics($class, $statics);
        }
        $env = getenv();
        $autoloaders = [];
        foreach (spl_autoload_functions() as $loader) {
            $key = self::identify($loader)[0];
            $autoloaders[$key] = ($autoloaders[$key] ?? 0) + 1;
        }
        return new self($functions, $classes, get_defined_constants(true)['user'] ?? [], $statics, $env, $autoloaders, memory_get_usage());
    }

    /**
     * An autoloader's identity (a closure by where it is written, a method by class and name, a function by
     * name) and the file it is written in, when known.
     *
     * @return array{string, ?string, int}
     */
    public static function identify(callable $loader): array
    {
        try {
            if (\is_array($loader)) {
                $method = new \ReflectionMethod($loader[0], $loader[1]);
                $class = \is_object($loader[0]) ? $loader[0]::class : $loader[0];
                return ["$class::{$loader[1]}()", self::file($method), (int) $method->getStartLine()];
            }
            $function = new \ReflectionFunction(\Closure::fromCallable($loader));
            $file = self::file($function);
            $name = $function->isClosure() ? 'a closure at ' . self::where($function->getFileName(), $function->getStartLine()) : $function->getName() . '()';
            return [$name, $file, (int) $function->getStartLine()];
        } catch (\ReflectionException) {
            return [get_debug_type($loader), null, 0];
        }
    }

    public static function where(string|false $file, int|false $line): string
    {
        return $file === false ? 'unknown place' : basename($file) . ($line === false ? '' : ":$line");
    }

    /**
     * @param \ReflectionClass<object> $class
     * @param array<string, array{mixed, string}> $statics
     */
    private static function classStatics(\ReflectionClass $class, array &$statics): void
    {
        $name = $class->getName();
        foreach ($class->getMethods() as $method) {
            if ($method->getDeclaringClass()->getName() !== $name || $method->isAbstract()) {
                continue;
            }
            foreach ($method->getStaticVariables() as $variable => $value) {
                $statics["$name::{$method->getName()}()::\$$variable"] = [$value, self::where($method->getFileName(), $method->getStartLine())];
            }
        }
        foreach ($class->getProperties(\ReflectionProperty::IS_STATIC) as $property) {
            if ($property->getDeclaringClass()->getName() !== $name || !$property->isInitialized()) {
                continue;
            }
            $statics["$name::\${$property->getName()}"] = [$property->getValue(), self::where($class->getFileName(), $class->getStartLine())];
        }
    }

    private static function isOwn(string|false $file, string $own): bool
    {
        return $file === false || str_starts_with($file, $own . 'src/') || str_starts_with($file, $own . 'vendor/');
    }

    private static function file(\ReflectionFunctionAbstract $function): ?string
    {
        $file = $function->getFileName();
        return $file === false ? null : $file;
    }
}
