<?php

declare(strict_types=1);

namespace Kiln\App\Handler\Internal;

use Kiln\App\App;
use Kiln\App\Context;
use Kiln\App\Session;
use Kiln\Http\Request;
use Kiln\Http\Response;

/**
 * What a handler's parameters ask for, read by reflection once per handler and cached by the invoker.
 *
 * @internal
 */
final class Signature
{
    /** Takes no parameters: called with none. */
    public const SHAPE_NONE = 0;
    /** Takes only the Request: called with it. */
    public const SHAPE_REQUEST = 1;
    /** Anything else: arguments are built per call. */
    public const SHAPE_GENERAL = 2;

    public readonly int $shape;

    public readonly bool $wantsResponse;

    /**
     * @param string $name the handler as named in error messages
     * @param list<Parameter> $parameters
     */
    private function __construct(
        public readonly string $name,
        public readonly array $parameters,
    ) {
        $only = \count($parameters) === 1 ? $parameters[0]->source : null;
        $this->shape = match (true) {
            $parameters === [] => self::SHAPE_NONE,
            $only === ParameterSource::Request => self::SHAPE_REQUEST,
            default => self::SHAPE_GENERAL,
        };
        $wantsResponse = false;
        foreach ($parameters as $parameter) {
            $wantsResponse = $wantsResponse || $parameter->source === ParameterSource::Response;
        }
        $this->wantsResponse = $wantsResponse;
    }

    public static function of(\ReflectionFunctionAbstract $function, string $name): self
    {
        $parameters = [];
        foreach ($function->getParameters() as $parameter) {
            if ($parameter->isVariadic()) {
                break; // nothing to pass: an empty variadic is always valid
            }
            $parameters[] = self::parameter($parameter, $name);
        }
        return new self($name, $parameters);
    }

    private static function parameter(\ReflectionParameter $parameter, string $handler): Parameter
    {
        $name = $parameter->getName();
        $optional = $parameter->isDefaultValueAvailable() || $parameter->allowsNull();
        $default = $parameter->isDefaultValueAvailable() ? $parameter->getDefaultValue() : null;
        $type = $parameter->getType();
        $names = match (true) {
            $type === null => ['mixed'],
            $type instanceof \ReflectionNamedType => [$type->getName()],
            $type instanceof \ReflectionUnionType => array_map(
                static fn(\ReflectionType $t): string => $t instanceof \ReflectionNamedType ? $t->getName() : '',
                $type->getTypes(),
            ),
            default => [''], // an intersection type: no value the invoker has can satisfy it
        };
        if (\count($names) === 1) {
            $source = match ($names[0]) {
                Request::class => ParameterSource::Request,
                Context::class => ParameterSource::Context,
                App::class => ParameterSource::App,
                Response::class => ParameterSource::Response,
                Session::class => ParameterSource::Session,
                default => null,
            };
            if ($source !== null) {
                return new Parameter($name, $source);
            }
        }
        $types = self::scalarTypes($names);
        if ($types !== null) {
            return new Parameter($name, ParameterSource::Route, $types, $optional, $default);
        }
        if ($optional) {
            return new Parameter($name, ParameterSource::Default, [], true, $default);
        }
        throw new \Error("Handler $handler: cannot supply parameter \$$name of type $type"
            . self::missingClass($type)
            . '; a handler can take Request, Context, App, Response, Session, and route parameters by name typed '
            . 'int, float, bool, string or mixed (give other parameters a default value)');
    }

    /**
     * Why a type names no class at all, said before the list of what a handler can take: a `Request` that is not
     * `Kiln\Http\Request` is most often a file without its `use` line, and the list alone reads as a contradiction.
     */
    private static function missingClass(?\ReflectionType $type): string
    {
        $named = $type instanceof \ReflectionUnionType ? $type->getTypes() : [$type];
        foreach ($named as $one) {
            if (!$one instanceof \ReflectionNamedType || $one->isBuiltin()) {
                continue;
            }
            $class = $one->getName();
            if (class_exists($class) || interface_exists($class)) {
                continue;
            }
            $at = strrpos($class, '\\');
            $short = $at === false ? $class : substr($class, $at + 1);
            foreach ([Request::class, Context::class, App::class, Response::class, Session::class] as $known) {
                if (strcasecmp(substr($known, (int) strrpos($known, '\\') + 1), $short) === 0) {
                    return ": there is no class $class (is `use $known;` missing from the file?)";
                }
            }
            return ": there is no class $class (is a `use` line missing from the file?)";
        }
        return '';
    }

    /**
     * @param array<string> $names
     * @return list<ScalarType>|null in coercion order (int, float, bool, string); null if any type is not scalar
     */
    private static function scalarTypes(array $names): ?array
    {
        $types = [];
        foreach ($names as $typeName) {
            if ($typeName === 'null') {
                continue;
            }
            $scalar = ScalarType::fromName($typeName);
            if ($scalar === null) {
                return null;
            }
            $types[$scalar->name] = $scalar;
        }
        $ordered = [];
        foreach (ScalarType::cases() as $case) {
            if (isset($types[$case->name])) {
                $ordered[] = $case;
            }
        }
        return $ordered === [] ? null : $ordered;
    }
}
