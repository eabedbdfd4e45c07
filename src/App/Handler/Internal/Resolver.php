<?php

declare(strict_types=1);

namespace Kiln\App\Handler\Internal;

/**
 * Turns a route handler value into a Resolved, or says clearly why it cannot be called.
 *
 * @internal
 */
final class Resolver
{
    private const FORMS = "use a Closure, an invokable object, [Class::class, 'method'], 'Class::method' or [\$object, 'method']";

    /**
     * The cache key of a non-Closure handler: forms that resolve alike share it, no two others do.
     * Throws \Error, naming the handler, for a value that is no handler form at all.
     */
    public static function key(mixed $handler): string
    {
        if (\is_string($handler)) {
            return $handler;
        }
        if (\is_array($handler) && \count($handler) === 2 && isset($handler[0], $handler[1]) && \is_string($handler[1])) {
            return match (true) {
                \is_string($handler[0]) => $handler[0] . '::' . $handler[1],
                \is_object($handler[0]) => $handler[0]::class . '->' . $handler[1],
                default => throw self::unresolvable($handler, 'it is not a handler form'),
            };
        }
        return \is_object($handler)
            ? $handler::class . '->__invoke'
            : throw self::unresolvable($handler, 'it is not a handler form');
    }

    public static function resolve(mixed $handler): Resolved
    {
        if ($handler instanceof \Closure) {
            $function = new \ReflectionFunction($handler);
            $name = 'closure defined at ' . $function->getFileName() . ':' . $function->getStartLine();
            return new Resolved(Signature::of($function, $name));
        }
        if (\is_object($handler)) {
            if (!method_exists($handler, '__invoke')) {
                throw self::unresolvable($handler, 'the object has no __invoke() method');
            }
            return new Resolved(Signature::of(new \ReflectionMethod($handler, '__invoke'), $handler::class . '::__invoke'));
        }
        if (\is_string($handler) && str_contains($handler, '::')) {
            $handler = explode('::', $handler, 2);
        }
        if (\is_array($handler) && \count($handler) === 2 && isset($handler[0], $handler[1]) && \is_string($handler[1])) {
            $target = $handler[0];
            if (\is_object($target)) {
                $method = self::method($handler, $target::class, $handler[1]);
                return new Resolved(Signature::of($method, $target::class . '::' . $method->getName()));
            }
            if (\is_string($target)) {
                return self::classMethod($handler, ltrim($target, '\\'), $handler[1]);
            }
        }
        if (\is_string($handler) && \function_exists($handler)) {
            return new Resolved(Signature::of(new \ReflectionFunction($handler), $handler . '()'));
        }
        throw self::unresolvable($handler, 'it is not a handler form');
    }

    public static function describe(mixed $handler): string
    {
        return match (true) {
            \is_string($handler) => "'$handler'",
            \is_array($handler) => '[' . implode(', ', array_map(
                static fn(mixed $part): string => \is_string($part) ? "'$part'" : get_debug_type($part),
                $handler,
            )) . ']',
            default => get_debug_type($handler),
        };
    }

    /** @param array<mixed> $handler */
    private static function classMethod(array $handler, string $class, string $name): Resolved
    {
        if (!class_exists($class)) {
            throw self::unresolvable($handler, "class $class does not exist (or cannot be autoloaded)");
        }
        $method = self::method($handler, $class, $name);
        $label = $class . '::' . $method->getName();
        if ($method->isStatic()) {
            return new Resolved(Signature::of($method, $label));
        }
        $reflection = new \ReflectionClass($class);
        if (!$reflection->isInstantiable()) {
            throw self::unresolvable($handler, "class $class cannot be instantiated (abstract, or a private constructor)");
        }
        $required = $reflection->getConstructor()?->getNumberOfRequiredParameters() ?? 0;
        if ($required > 0) {
            throw new \Error("Handler $label: class $class needs $required constructor argument(s), but Kiln creates "
                . "controllers once per worker with `new $class()`; give the constructor parameters defaults, or "
                . "register [\$object, '" . $method->getName() . "'] with an instance you build");
        }
        return new Resolved(Signature::of($method, $label), $reflection->getName(), $method->getName());
    }

    /** @param array<mixed> $handler */
    private static function method(array $handler, string $class, string $name): \ReflectionMethod
    {
        if (!method_exists($class, $name)) {
            throw self::unresolvable($handler, "$class has no method $name()");
        }
        $method = new \ReflectionMethod($class, $name);
        if (!$method->isPublic()) {
            throw self::unresolvable($handler, "$class::$name() is not public");
        }
        if ($method->isAbstract()) {
            throw self::unresolvable($handler, "$class::$name() is abstract");
        }
        return $method;
    }

    private static function unresolvable(mixed $handler, string $why): \Error
    {
        return new \Error('Cannot use ' . self::describe($handler) . " as a route handler: $why; " . self::FORMS);
    }
}
